select
  d.id,
  d.name as report_name,
  d.type as command_name,
  case when d.day is not null then d.day || 'T00:00:00.000Z' end as date,
  d.title,
  root.path || '/' || d.path as path,
  d.body as content
from documents d, workspace_root root
where d.kind = 'report'
  and (d.path = :path or root.path || '/' || d.path = :path)
