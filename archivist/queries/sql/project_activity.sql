-- project_activity: what the agents did, project by project, in a time range (by default the last
-- 30 days): what an agent needs to answer "what did we do last week".
--
-- One row per project (null: sessions without one), most recently active first: project, agents
-- and models (JSON), sessions (how many) and the newest of them (JSON: id, title, agent, started,
-- last, messages; at most 20), messages, files_touched (JSON: the files its sessions' tool calls
-- read or changed, most touched first, at most 20, each with how many sessions touched it), commands
-- (how many the sessions ran) and the most run (JSON, at most 10), tokens and cost (its responses'
-- in the range, at the price data's prices), first and last. A session counts when it ran at
-- some time inside the range, as list_conversations has it.
with inputs as materialized (
  select
    archivist_time(coalesce(nullif(trim(:start_date), ''), '30 days ago'), 0) as start_at,
    archivist_time(coalesce(nullif(trim(:end_date), ''), 'today'), 1) as end_at,
    archivist_list(:agents, 'lower') as agents,
    archivist_list(:projects) as projects
),
spans as materialized (
  select d.id, d.title, d.extra ->> '$.project' as project, coalesce(d.extra ->> '$.agent', d.type) as agent,
    d.extra ->> '$.started' as started, coalesce(d.extra ->> '$.last', d.extra ->> '$.started') as last,
    coalesce(d.extra ->> '$.messages', 0) as messages, d.extra -> '$.touched_files' as files,
    coalesce(d.extra ->> '$.commands', 0) as commands, d.extra -> '$.models' as models,
    d.timestamp as first_at,
    coalesce((julianday(d.extra ->> '$.last') - 2440587.5) * 86400.0, d.timestamp) as last_at
  from documents d
  where d.kind = 'conversation' and d.source like 'log:%'
),
chosen as materialized (
  select s.*,
    -- a project's last folder name: what follows its last '/' (or '\')
    substr(
      rtrim(replace(s.project, '\', '/'), '/'),
      length(rtrim(rtrim(replace(s.project, '\', '/'), '/'), replace(rtrim(replace(s.project, '\', '/'), '/'), '/', '')))
        + 1
    ) as project_name
  from spans s, inputs i
  where s.first_at <= i.end_at and s.last_at >= i.start_at
    and (i.agents = '[]' or s.agent in (select value from json_each(i.agents)))
),
wanted as materialized (
  select c.* from chosen c, inputs i
  where i.projects = '[]' or exists (
    select 1 from json_each(i.projects) p
    where p.value = c.project_name or rtrim(p.value, '/') = rtrim(c.project, '/')
  )
),
used as materialized (
  select w.project, sum(m.input_tokens + m.output_tokens + m.cache_write_tokens + m.cache_read_tokens) as tokens,
    round(sum(m.price), 6) as cost
  from wanted w
  join messages m on m.document_id = w.id and m.input_tokens is not null
  cross join inputs i
  where m.timestamp is null
    or m.timestamp between strftime('%Y-%m-%dT%H:%M:%SZ', i.start_at, 'unixepoch')
      and strftime('%Y-%m-%dT%H:%M:%SZ', i.end_at, 'unixepoch')
  group by w.project
),
touched as materialized (
  select w.project, f.value as file, count(distinct w.id) as sessions
  from wanted w, json_each(w.files) f
  group by w.project, f.value
),
run as materialized (
  select w.project, cmd.value as command, count(*) as times
  from wanted w
  join messages m on m.document_id = w.id and m.tool_calls != '[]'
  join json_each(m.tool_calls) c
  join json_each(c.value, '$.commands') cmd
  group by w.project, cmd.value
)
select
  w.project,
  (select json_group_array(distinct agent) from wanted x where x.project is w.project) as agents,
  (select json_group_array(distinct m.value) from wanted x, json_each(x.models) m where x.project is w.project)
    as models,
  count(*) as sessions,
  (select json_group_array(json_object(
      'id', id, 'title', title, 'agent', agent, 'started', started, 'last', last, 'messages', messages))
    from (select * from wanted x where x.project is w.project order by x.last_at desc limit 20)) as newest,
  sum(w.messages) as messages,
  (select json_group_array(json_object('file', file, 'sessions', sessions))
    from (select * from touched t where t.project is w.project order by t.sessions desc, t.file limit 20))
    as files_touched,
  sum(w.commands) as commands,
  (select json_group_array(json_object('command', command, 'times', times))
    from (select * from run r where r.project is w.project order by r.times desc, r.command limit 10)) as top_commands,
  (select tokens from used u where u.project is w.project) as tokens,
  (select cost from used u where u.project is w.project) as cost,
  min(w.started) as first,
  max(w.last) as last
from wanted w
group by w.project
order by max(w.last_at) desc
