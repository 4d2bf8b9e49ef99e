select
  d.id,
  d.name as report_name,
  d.type as command_name,
  case when d.day is not null then d.day || 'T00:00:00.000Z' end as date,
  d.title,
  length(d.body) as characters,
  (select path from workspace_root) || '/' || d.path as path
from documents d
where d.kind = 'report' and d.type = :command
order by d.day is null, d.day desc, d.name
