select
  -- include: _report_fields.sql
  length(d.body) as characters,
  (select path from workspace_root) || '/' || d.path as path
from documents d
where d.kind = 'report' and d.type = :command
order by d.day is null, d.day desc, d.name
