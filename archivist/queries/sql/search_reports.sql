with hits as materialized (
  -- include: _report_hits.sql
),
scored as (
  select d.id, d.name, d.type, d.day, d.path, d.body,
    archivist_count(d.body, :query) as match_count
  from hits
  join documents d on d.id = hits.id
  where d.kind = 'report'
    and (:command_filter = '' or d.type = :command_filter)
)
select
  s.name as report_name,
  s.type as command_name,
  case when s.day is not null then s.day || 'T00:00:00.000Z' end as date,
  archivist_excerpt(s.body, :query, 100) as excerpt,
  archivist_report_link(s.type, s.name, root.path || '/' || s.path) as link,
  root.path || '/' || s.path as path,
  s.match_count
from scored s left join workspace_root root  -- (none before a first run ends: link and path are null)
where s.match_count > 0
order by s.match_count desc, s.day is null, s.day desc, s.name
limit archivist_limit(:max_results, 10, 100)
