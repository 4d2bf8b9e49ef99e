-- usage: the tokens the model responses of agent logs used, and what they cost, per day, month,
-- 5-hour block, model, agent, project or session (group_by), within a time range.
--
-- One row per group: key (the day, month, block's start, model, agent or project), the tokens
-- (input not read from the cache, output, cache write, cache read, and their sum), cost (at
-- the price data's prices: archive.prices; null where no response of the group could be
-- priced), stated_cost (what the logs themselves say they cost), responses, unpriced (the
-- responses whose model the price data does not know), sessions, models, first and last (the
-- group's first and last response), and price_data (the data that priced them). A response's
-- time is its message's (UTC), else its session's start; one with neither falls outside every
-- time range, and in no day, month or block. The range is read by the hour (usage_hours holds
-- each session's usage by the hour): a bound inside an hour takes that hour whole. A block is
-- ccusage's: five hours from the hour a response falls in, when no block is open then. A
-- session's row (key: its id) also has its title, agent and project; sessions come newest last
-- response first, a page of them by limit and offset. usage_recorded is 1 on each of these rows.
--
-- An agent with sessions in the range (a message inside it, by the hour: message_hours) but no
-- usage there has one more row, last, with usage_recorded 0: key and agent its name, sessions
-- how many, tokens and cost null (its logs record none: never left out in silence).
with inputs as materialized (
  select
    coalesce(nullif(lower(trim(:group_by)), ''), 'day') as group_by,
    archivist_list(:agents, 'lower') as agents,
    archivist_list(:projects) as projects,
    strftime('%Y-%m-%dT%H:%M:%SZ', archivist_time(:start_date, 0), 'unixepoch') as start_at,
    strftime('%Y-%m-%dT%H:%M:%SZ', archivist_time(:end_date, 1), 'unixepoch') as end_at,
    archivist_limit(:limit, 50, 100) as page_size,
    max(0, cast(coalesce(nullif(trim(:offset), ''), '0') as integer)) as skip
),
wanted as (
  -- the sessions' usage by the hour (usage_hours: a response's time is its message's, else its
  -- session's start), within the range by the hour, of the agents and projects asked for; a
  -- project by its path (a trailing '/' or not) or by its last folder name (archivist_in_projects)
  select u.document_id, u.hour, u.model, u.agent, u.project, u.input_tokens, u.output_tokens,
    u.cache_write_tokens, u.cache_read_tokens, u.price, u.priced, u.cost, u.responses, u.first, u.last
  from usage_hours u indexed by usage_hours_hour
  cross join inputs i
  where (i.start_at is null or u.hour >= substr(i.start_at, 1, 13))
    and (i.end_at is null or u.hour <= substr(i.end_at, 1, 13))
    and (i.agents = '[]' or u.agent in (select value from json_each(i.agents)))
    and (i.projects = '[]' or archivist_in_projects(i.projects, u.project))
),
hours as materialized (
  -- the hours in which a response came, in order (only for blocks)
  select hour, row_number() over (order by hour) as n
  from (
    select distinct u.hour
    from wanted u, inputs i
    where i.group_by = 'block' and u.hour is not null
  )
),
blocks(n, hour, opened) as (
  select n, hour, hour from hours where n = 1
  union all
  select h.n, h.hour,
    case when h.hour >= strftime('%Y-%m-%dT%H', b.opened || ':00:00', '+5 hours') then h.hour else b.opened end
  from blocks b join hours h on h.n = b.n + 1
),
keyed as (
  select u.*,
    case i.group_by
      when 'day' then substr(u.hour, 1, 10)
      when 'month' then substr(u.hour, 1, 7)
      when 'block' then (select b.opened || ':00:00Z' from blocks b where b.hour = u.hour)
      when 'model' then u.model
      when 'agent' then u.agent
      when 'project' then u.project
      when 'session' then cast(u.document_id as text)
    end as key
  from wanted u, inputs i
),
meta as materialized (select version from price_data),
grouped as (
  select
    k.key,
    sum(k.input_tokens) as input_tokens,
    sum(k.output_tokens) as output_tokens,
    sum(k.cache_write_tokens) as cache_write_tokens,
    sum(k.cache_read_tokens) as cache_read_tokens,
    sum(k.input_tokens + k.output_tokens + k.cache_write_tokens + k.cache_read_tokens) as total_tokens,
    round(sum(k.price), 6) as cost,
    round(sum(k.cost), 6) as stated_cost,
    sum(k.responses) as responses,
    sum(k.responses) - sum(k.priced) as unpriced,
    count(distinct k.document_id) as sessions,
    json_group_array(distinct k.model) filter (where k.model is not null) as models,
    min(k.first) as first,
    max(k.last) as last,
    case i.group_by when 'agent' then k.key when 'session' then max(k.agent) end as agent
  from keyed k, inputs i
  where i.group_by not in ('day', 'month', 'block') or k.key is not null
  group by k.key
),
ordered as (
  select g.*,
    row_number() over (
      order by
        case when i.group_by in ('day', 'month', 'block') then g.key end,
        case when i.group_by = 'session' then g.last end desc,
        g.total_tokens desc,
        g.key
    ) as n
  from grouped g, inputs i
),
shown as (
  -- every group; of sessions, a page
  select o.*
  from ordered o, inputs i
  where i.group_by != 'session' or o.n between i.skip + 1 and i.skip + i.page_size
),
ran as (
  -- the sessions with a message in the range, of the agents and projects asked for
  select distinct h.document_id, h.agent
  from message_hours h
  cross join inputs i
  where (i.start_at is null or h.hour >= substr(i.start_at, 1, 13))
    and (i.end_at is null or h.hour <= substr(i.end_at, 1, 13))
    and (i.agents = '[]' or h.agent in (select value from json_each(i.agents)))
    and (i.projects = '[]' or archivist_in_projects(i.projects, h.project))
),
unrecorded as (
  -- the agents among them whose logs record no usage in the range (listed by agent)
  select r.agent, count(*) as sessions
  from ran r
  where r.agent is not null and r.agent not in (select w.agent from wanted w where w.agent is not null)
  group by r.agent
),
listed as (
  select
    s.key, s.input_tokens, s.output_tokens, s.cache_write_tokens, s.cache_read_tokens, s.total_tokens, s.cost,
    s.stated_cost, s.responses, s.unpriced, s.sessions, s.models, s.first, s.last, s.agent,
    case when i.group_by = 'session' then d.title end as title,
    case when i.group_by = 'session' then d.extra ->> '$.project' end as project,
    1 as usage_recorded,
    s.n
  from shown s
  cross join inputs i
  left join documents d on i.group_by = 'session' and d.id = cast(s.key as integer)
  union all
  select u.agent, null, null, null, null, null, null, null, 0, 0, u.sessions, '[]', null, null, u.agent, null, null,
    0, u.agent
  from unrecorded u, inputs i
  where i.group_by = 'agent'  -- (a row whose key is an agent: only where the rows are agents)
)
select
  l.key, l.input_tokens, l.output_tokens, l.cache_write_tokens, l.cache_read_tokens, l.total_tokens, l.cost,
  l.stated_cost, l.responses, l.unpriced, l.sessions, l.models, l.first, l.last,
  (select version from meta) as price_data,
  l.agent, l.title, l.project, l.usage_recorded
from listed l
order by l.usage_recorded desc, l.n
