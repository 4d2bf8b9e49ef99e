-- file_history: every tool call of the agent logs that read or changed a file, newest first, a
-- page at a time (offset, limit).
--
-- The file is a full path, as the log recorded it, or a file name alone (every path whose last
-- part it is). The sessions that touched it are found by their file words (the search's files
-- filter, one lookup of the full-text index), then their messages' tool calls are read for it.
-- Each row: document_id, title, agent and project of the session; seq, timestamp and role of the
-- message; tool (the call's name), file (the path as the call named it) and commands (JSON); and
-- on every row the paging: total, has_more and next_offset.
with inputs as materialized (
  select
    replace(trim(:path), '\', '/') as path,
    instr(replace(trim(:path), '\', '/'), '/') = 0 as name_only,
    archivist_limit(:limit, 50, 100) as size,
    max(0, cast(coalesce(nullif(trim(:offset), ''), '0') as integer)) as skip
),
words as materialized (
  select archivist_search_words(json_object('files', json_array(path), 'match_mode', 'all')) ->> 'session_files'
    as expression
  from inputs
),
sessions as materialized (
  select rowid as id from documents_fts where documents_fts match (select coalesce(expression, '""') from words)
),
calls as materialized (
  select m.document_id, m.seq, m.timestamp, m.role, c.value ->> '$.name' as tool, f.value as file,
    c.value -> '$.commands' as commands
  from sessions s
  join messages m on m.document_id = s.id
  join json_each(m.tool_calls) c
  join json_each(c.value, '$.files') f
  cross join inputs i
  where m.tool_calls != '[]'
    and (
      replace(f.value, '\', '/') = i.path
      or (i.name_only and substr(replace(f.value, '\', '/'), -length(i.path) - 1) = '/' || i.path)
    )
),
total as materialized (select count(*) as n from calls)
select
  c.document_id, d.title, coalesce(d.extra ->> '$.agent', d.type) as agent, d.extra ->> '$.project' as project,
  c.seq, coalesce(c.timestamp, d.extra ->> '$.started') as timestamp, c.role, c.tool, c.file, c.commands,
  t.n as total,
  i.skip + i.size < t.n as has_more,
  case when i.skip + i.size < t.n then i.skip + i.size end as next_offset
from calls c
join documents d on d.id = c.document_id
cross join inputs i
cross join total t
order by coalesce(c.timestamp, d.extra ->> '$.started') desc, c.document_id desc, c.seq desc
limit (select size from inputs) offset (select skip from inputs)
