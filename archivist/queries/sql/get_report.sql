select
  -- include: _report_fields.sql
  root.path || '/' || d.path as path,
  d.body as content
from documents d, workspace_root root
where d.kind = 'report'
  and (d.path = :path or root.path || '/' || d.path = :path)
