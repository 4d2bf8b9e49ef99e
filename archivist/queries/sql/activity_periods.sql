-- activity_periods: what the agents did per day or week in a time range (by default the 30 days
-- to the newest day with a message: _activity_range.sql): the sessions, messages, tokens and cost of each period, for the activity page's charts.
--
-- One row per period with a message, in order: key (the day, or the Monday that starts the week,
-- in UTC), sessions (how many had a message in it), messages (every role), responses (with
-- usage), the tokens (input not read from the cache, output, cache write, cache read, and their
-- sum) and cost (at the price data's prices; null where none could be priced). Messages are
-- counted by the hour (message_hours), usage too (usage_hours): a bound inside an hour takes that
-- hour whole. A message's time is its own, else its session's start.
with bounds as materialized (
  -- include: _activity_range.sql
),
inputs as materialized (
  select
    coalesce(nullif(lower(trim(:group_by)), ''), 'day') as group_by,
    archivist_list(:agents, 'lower') as agents,
    archivist_list(:projects) as projects,
    strftime('%Y-%m-%dT%H', b.start_at, 'unixepoch') as start_hour,
    strftime('%Y-%m-%dT%H', b.end_at, 'unixepoch') as end_hour
  from bounds b
),
counted as materialized (
  -- the messages by the hour in the range, of the agents and projects asked for
  select case i.group_by when 'week' then date(substr(h.hour, 1, 10), '-6 days', 'weekday 1')
      else substr(h.hour, 1, 10) end as key,
    h.document_id, h.messages
  from message_hours h indexed by message_hours_hour
  cross join inputs i
  where h.hour between i.start_hour and i.end_hour
    and (i.agents = '[]' or h.agent in (select value from json_each(i.agents)))
    and (i.projects = '[]' or archivist_in_projects(i.projects, h.project))
),
used as materialized (
  -- their usage, by the same periods
  select case i.group_by when 'week' then date(substr(u.hour, 1, 10), '-6 days', 'weekday 1')
      else substr(u.hour, 1, 10) end as key,
    sum(u.responses) as responses,
    sum(u.input_tokens) as input_tokens,
    sum(u.output_tokens) as output_tokens,
    sum(u.cache_write_tokens) as cache_write_tokens,
    sum(u.cache_read_tokens) as cache_read_tokens,
    round(sum(u.price), 6) as cost
  from usage_hours u indexed by usage_hours_hour
  cross join inputs i
  where u.hour between i.start_hour and i.end_hour
    and (i.agents = '[]' or u.agent in (select value from json_each(i.agents)))
    and (i.projects = '[]' or archivist_in_projects(i.projects, u.project))
  group by 1
)
select
  c.key,
  count(distinct c.document_id) as sessions,
  sum(c.messages) as messages,
  coalesce(u.responses, 0) as responses,
  coalesce(u.input_tokens, 0) as input_tokens,
  coalesce(u.output_tokens, 0) as output_tokens,
  coalesce(u.cache_write_tokens, 0) as cache_write_tokens,
  coalesce(u.cache_read_tokens, 0) as cache_read_tokens,
  coalesce(u.input_tokens + u.output_tokens + u.cache_write_tokens + u.cache_read_tokens, 0) as total_tokens,
  u.cost
from counted c
left join used u on u.key = c.key
where c.key is not null
group by c.key
order by c.key
