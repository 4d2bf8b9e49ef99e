-- project_activity: what the agents did, project by project, in a time range (by default the 30
-- days to the newest day with a message: _activity_range.sql): what an agent needs to answer "what
-- did we do last week".
--
-- One row per project (null: sessions without one), most recently active first: project, agents
-- and models (JSON), sessions (how many) and the newest of them (JSON: id, title, agent, started,
-- last, messages; at most 20), messages, files_touched (JSON: the files its sessions' tool calls
-- read or changed, most touched first, at most 20, each with how many sessions touched it), commands
-- (how many the sessions ran) and the most run (JSON, at most 10), tokens and cost (its responses'
-- in the range, at the price data's prices), first and last. A session counts when it ran at
-- some time inside the range, as list_conversations has it.
with bounds as materialized (
  -- include: _activity_range.sql
),
inputs as materialized (
  select
    b.start_at,
    b.end_at,
    archivist_list(:agents, 'lower') as agents,
    archivist_list(:projects) as projects
  from bounds b
),
spans as (
  -- each session's span in Unix seconds: its first message (the document's time) to its last
  -- (its last message's time, read by the messages' index; else the last its extra names)
  select d.id, d.timestamp as first_at, coalesce(
      (julianday((select m.timestamp from messages m where m.document_id = d.id order by m.seq desc limit 1))
        - 2440587.5) * 86400.0,
      (julianday(d.extra ->> '$.last') - 2440587.5) * 86400.0,
      d.timestamp
    ) as last_at
  from documents d indexed by documents_timestamp, inputs i
  where d.timestamp <= i.end_at and d.kind = 'conversation' and d.source like 'log:%'
),
chosen as materialized (
  select s.id, d.title, d.extra ->> '$.project' as project, coalesce(d.extra ->> '$.agent', d.type) as agent,
    d.extra ->> '$.started' as started, coalesce(d.extra ->> '$.last', d.extra ->> '$.started') as last,
    coalesce(d.extra ->> '$.messages', 0) as messages, d.extra -> '$.touched_files' as files,
    coalesce(d.extra ->> '$.commands', 0) as commands, d.extra -> '$.models' as models, s.last_at
  from spans s
  join documents d on d.id = s.id
  cross join inputs i
  where s.last_at >= i.start_at
    and (i.agents = '[]' or coalesce(d.extra ->> '$.agent', d.type) in (select value from json_each(i.agents)))
),
wanted as materialized (
  -- a project by its path (a trailing '/' or not) or by its last folder name
  select c.* from chosen c, inputs i where i.projects = '[]' or archivist_in_projects(i.projects, c.project)
),
used as materialized (
  -- their responses' usage in the range, by the hour (usage_hours)
  select w.project, sum(u.input_tokens + u.output_tokens + u.cache_write_tokens + u.cache_read_tokens) as tokens,
    round(sum(u.price), 6) as cost
  from wanted w
  cross join usage_hours u indexed by usage_hours_document on u.document_id = w.id
  cross join inputs i
  where u.hour between strftime('%Y-%m-%dT%H', i.start_at, 'unixepoch') and strftime('%Y-%m-%dT%H', i.end_at, 'unixepoch')
  group by w.project
),
touched as materialized (
  select w.project, f.value as file, count(distinct w.id) as sessions
  from wanted w, json_each(w.files) f
  group by w.project, f.value
),
run as materialized (
  -- the commands their tool calls ran (command_calls: a session's messages are one range of ids)
  select w.project, c.command, count(*) as times
  from wanted w
  cross join command_calls c on c.message_id between w.id * 1048576 and w.id * 1048576 + 1048575
  group by w.project, c.command
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
