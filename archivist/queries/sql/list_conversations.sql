-- list_conversations: conversations newest first (by their last message, else their date),
-- filtered by agent, project and time; a page of them by limit and offset.
--
-- Sessions read from agent logs (source log:<id>) carry agent, project, models, branch and
-- their first and last message times in `extra`; conversations written in the workspace are
-- agent 'workspace' and have none of these. Time filters: a session matches when it ran at
-- some time inside the range (first message before its end, last message after its start);
-- a workspace conversation matches by the rule of search, its whole date inside the range
-- on its author's calendar (the same date words and edge days: archivist_date_words). With
-- include=usage, a session's tokens and cost (its responses', at the price data's prices; null
-- where none was priced); else both null.
with inputs as materialized (
  select
    archivist_list(:agents, 'lower') as agents,
    archivist_list(:projects) as projects,
    archivist_time(:start_date, 0) as start_at,
    archivist_time(:end_date, 1) as end_at,
    archivist_limit(:limit, 20, 100) as page_size,
    max(0, cast(coalesce(nullif(trim(:offset), ''), '0') as integer)) as skip,
    'usage' in (select value from json_each(archivist_list(:include, 'lower'))) as usage
),
date_filter as materialized (
  -- search's time filter: the words of whole years, months and days inside, and the days a bound cuts
  select archivist_date_words(
    start_at, end_at, (select min(timestamp) from documents), (select max(timestamp) from documents)
  ) as spec
  from inputs
),
conversations as (
  select d.id, d.title, d.path, d.date, d.date_precision, d.month, d.day, d.timestamp, d.extra,
    case when d.source like 'log:%' then coalesce(d.extra ->> '$.agent', d.type) else 'workspace' end as agent,
    case when d.source like 'log:%' then d.extra ->> '$.project' end as project
  from documents d
  where d.kind = 'conversation'
),
timed as (
  select c.*,
    -- a session's span in Unix seconds: its first message (the document's time) to its last
    case when c.agent != 'workspace' then c.timestamp end as first_at,
    case when c.agent != 'workspace'
      then coalesce((julianday(c.extra ->> '$.last') - 2440587.5) * 86400.0, c.timestamp) end as last_at
  from conversations c, inputs i
  where i.agents = '[]' or c.agent in (select value from json_each(i.agents))
),
matching as (
  select t.*
  from timed t, inputs i, date_filter f
  where (
      -- a project by its path (a trailing '/' or not) or by its last folder name
      i.projects = '[]' or archivist_in_projects(i.projects, t.project)
    )
    and (
      f.spec is null
      or (
        -- a session: it ran inside the range
        t.agent != 'workspace'
        and t.first_at is not null
        and (i.start_at is null or t.last_at >= i.start_at)
        and (i.end_at is null or t.first_at <= i.end_at)
      )
      or (
        -- a workspace conversation: its whole date inside, as search filters it
        t.agent = 'workspace'
        and exists (
          select 1 from json_each(f.spec, '$.words') w
          where w.value in (
            'y' || substr(t.month, 1, 4), 'm' || replace(t.month, '-', ''), 'd' || replace(t.day, '-', '')
          )
        )
        and not (
          -- on a day that a bound with a time of day cuts, only a time inside the range
          t.day is not null and t.day in (select value from json_each(f.spec, '$.edge_days'))
          and not (
            t.date_precision = 'second'
            and t.timestamp between coalesce(i.start_at, t.timestamp) and coalesce(i.end_at, t.timestamp)
          )
        )
      )
    )
),
page as (
  -- the page's ids first, so that only its conversations' columns are read again
  select m.id, m.agent, m.project, coalesce(m.last_at, m.timestamp) as sort_at
  from matching m
  order by sort_at is null, sort_at desc, m.id desc
  limit (select page_size from inputs) offset (select skip from inputs)
)
select
  d.id,
  d.title,
  p.agent,
  p.project,
  case when p.agent != 'workspace' then coalesce(d.extra -> '$.models', '[]') else '[]' end as models,
  case when p.agent != 'workspace' then d.extra ->> '$.branch' end as branch,
  case when p.agent != 'workspace' then d.extra ->> '$.started' end as started,
  case when p.agent != 'workspace' then d.extra ->> '$.last' end as last,
  case when p.agent != 'workspace'
    then (select count(*) from messages m where m.document_id = d.id) else 1 end as messages,
  d.date,
  d.path,
  case when p.agent != 'workspace' and d.extra ->> '$.parent' is not null
    then p.agent || ':' || (d.extra ->> '$.parent') end as parent,
  case when i.usage and p.agent != 'workspace' then (
    select sum(u.input_tokens + u.output_tokens + u.cache_write_tokens + u.cache_read_tokens)
    from usage_hours u where u.document_id = d.id
  ) end as tokens,
  case when i.usage and p.agent != 'workspace' then
    (select round(sum(u.price), 6) from usage_hours u where u.document_id = d.id) end as cost
from page p
cross join inputs i
join documents d on d.id = p.id
order by p.sort_at is null, p.sort_at desc, p.id desc
