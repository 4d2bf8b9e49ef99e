with hits as materialized (
  -- include: _report_hits.sql
),
matching as (
  select d.type as command_name, count(*) as matching_reports
  from hits
  join documents d on d.id = hits.id
  where archivist_count(d.body, :query) > 0
  group by d.type
),
commands as (
  select type as command_name, count(*) as reports, max(day) as latest_date
  from documents
  where kind = 'report'
  group by type
)
select
  c.command_name,
  c.reports,
  c.latest_date,
  coalesce(m.matching_reports, 0) as matching_reports,
  archivist_count(c.command_name, :query) > 0 as name_matches
from commands c
left join matching m on m.command_name = c.command_name
where archivist_count(c.command_name, :query) > 0 or m.matching_reports > 0
order by name_matches desc, matching_reports desc, c.command_name
