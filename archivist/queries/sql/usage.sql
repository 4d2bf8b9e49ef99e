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
-- time range, and in no day, month or block. A block is ccusage's: five hours from the hour a response falls in,
-- when no block is open then.
with inputs as materialized (
  select
    coalesce(nullif(lower(trim(:group_by)), ''), 'day') as group_by,
    archivist_list(:agents, 'lower') as agents,
    archivist_list(:projects) as projects,
    strftime('%Y-%m-%dT%H:%M:%SZ', archivist_time(:start_date, 0), 'unixepoch') as start_at,
    strftime('%Y-%m-%dT%H:%M:%SZ', archivist_time(:end_date, 1), 'unixepoch') as end_at
),
used as materialized (
  -- a response's time is its message's, else (a log that times only its sessions, as aider's)
  -- its session's start: the two halves keep the index's order on the times it holds
  select m.timestamp, coalesce(m.model, d.extra ->> '$.models[#-1]') as model,
    m.input_tokens, m.output_tokens, m.cache_write_tokens, m.cache_read_tokens, m.price, m.cost,
    m.document_id as session, coalesce(d.extra ->> '$.agent', d.type) as agent, d.extra ->> '$.project' as project
  from messages m indexed by messages_usage
  join documents d on d.id = m.document_id
  cross join inputs i
  where m.input_tokens is not null and m.timestamp is not null
    and (i.start_at is null or m.timestamp >= i.start_at)
    and (i.end_at is null or m.timestamp <= i.end_at)
    and (i.agents = '[]' or coalesce(d.extra ->> '$.agent', d.type) in (select value from json_each(i.agents)))
  union all
  select d.extra ->> '$.started', coalesce(m.model, d.extra ->> '$.models[#-1]'),
    m.input_tokens, m.output_tokens, m.cache_write_tokens, m.cache_read_tokens, m.price, m.cost,
    m.document_id, coalesce(d.extra ->> '$.agent', d.type), d.extra ->> '$.project'
  from messages m indexed by messages_usage
  join documents d on d.id = m.document_id
  cross join inputs i
  where m.input_tokens is not null and m.timestamp is null
    and (i.start_at is null or d.extra ->> '$.started' >= i.start_at)
    and (i.end_at is null or d.extra ->> '$.started' <= i.end_at)
    and (i.agents = '[]' or coalesce(d.extra ->> '$.agent', d.type) in (select value from json_each(i.agents)))
),
wanted as materialized (
  -- a project by its path (a trailing '/' or not) or by its last folder name, as list_conversations
  select u.*
  from used u, inputs i
  where i.projects = '[]' or exists (
    select 1 from json_each(i.projects) p
    where rtrim(p.value, '/') = rtrim(u.project, '/')
      or p.value = substr(
        rtrim(replace(u.project, '\', '/'), '/'),
        length(rtrim(
          rtrim(replace(u.project, '\', '/'), '/'),
          replace(rtrim(replace(u.project, '\', '/'), '/'), '/', '')
        )) + 1
      )
  )
),
hours as materialized (
  -- the hours in which a response came, in order (only for blocks)
  select hour, row_number() over (order by hour) as n
  from (
    select distinct substr(u.timestamp, 1, 13) as hour
    from wanted u, inputs i
    where i.group_by = 'block' and u.timestamp is not null
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
      when 'day' then substr(u.timestamp, 1, 10)
      when 'month' then substr(u.timestamp, 1, 7)
      when 'block' then (select b.opened || ':00:00Z' from blocks b where b.hour = substr(u.timestamp, 1, 13))
      when 'model' then u.model
      when 'agent' then u.agent
      when 'project' then u.project
    end as key
  from wanted u, inputs i
)
select
  k.key,
  sum(k.input_tokens) as input_tokens,
  sum(k.output_tokens) as output_tokens,
  sum(k.cache_write_tokens) as cache_write_tokens,
  sum(k.cache_read_tokens) as cache_read_tokens,
  sum(k.input_tokens + k.output_tokens + k.cache_write_tokens + k.cache_read_tokens) as total_tokens,
  round(sum(k.price), 6) as cost,
  round(sum(k.cost), 6) as stated_cost,
  count(*) as responses,
  count(*) - count(k.price) as unpriced,
  count(distinct k.session) as sessions,
  json_group_array(distinct k.model) filter (where k.model is not null) as models,
  min(k.timestamp) as first,
  max(k.timestamp) as last,
  (select version from price_data) as price_data
from keyed k, inputs i
where i.group_by not in ('day', 'month', 'block') or k.key is not null
group by k.key
order by
  case when (select group_by from inputs) in ('day', 'month', 'block') then k.key end,
  sum(k.input_tokens + k.output_tokens + k.cache_write_tokens + k.cache_read_tokens) desc,
  k.key
