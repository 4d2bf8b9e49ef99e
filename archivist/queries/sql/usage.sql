-- usage: the tokens the model responses of agent logs used, and what they cost, per day, month,
-- 5-hour block, model, agent or project (group_by), within a time range.
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
-- ccusage's: five hours from the hour a response falls in, when no block is open then.
with inputs as materialized (
  select
    coalesce(nullif(lower(trim(:group_by)), ''), 'day') as group_by,
    archivist_list(:agents, 'lower') as agents,
    archivist_list(:projects) as projects,
    strftime('%Y-%m-%dT%H:%M:%SZ', archivist_time(:start_date, 0), 'unixepoch') as start_at,
    strftime('%Y-%m-%dT%H:%M:%SZ', archivist_time(:end_date, 1), 'unixepoch') as end_at
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
    end as key
  from wanted u, inputs i
),
meta as materialized (select version from price_data)
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
  (select version from meta) as price_data
from keyed k, inputs i
where i.group_by not in ('day', 'month', 'block') or k.key is not null
group by k.key
order by
  case when (select group_by from inputs) in ('day', 'month', 'block') then k.key end,
  sum(k.input_tokens + k.output_tokens + k.cache_write_tokens + k.cache_read_tokens) desc,
  k.key
