select
  -- include: _report_fields.sql
  root.path || '/' || d.path as path,
  d.body as content
from documents d left join workspace_root root  -- (none before a first run ends: path is null)
where d.kind = 'report'
  and (d.path = :path or root.path || '/' || d.path = :path)
