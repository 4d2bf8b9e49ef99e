-- file_history: every tool call of the agent logs that read or changed a file, newest first, a
-- page at a time (offset, limit).
--
-- The file is a full path, as the log recorded it, or a file name alone (every path whose last
-- part it is): an index lookup of the files the tool calls name (file_calls), by path or name.
-- Each row: document_id, title, agent and project of the session; seq, timestamp and role of the
-- message; tool (the call's name), file (the path as the call named it, / for \), commands
-- (JSON), changed (1 when the call's edits changed the file) and edits (JSON: where it changed
-- the file, the call's edits, of every file it changed: the pages and MCP keep this file's;
-- else []); and on every row the paging: total, has_more and next_offset. With changes true,
-- only the calls that changed it.
with inputs as materialized (
  select
    replace(trim(:path), '\', '/') as path,
    instr(replace(trim(:path), '\', '/'), '/') = 0 as name_only,
    archivist_limit(:limit, 50, 100) as size,
    max(0, cast(coalesce(nullif(trim(:offset), ''), '0') as integer)) as skip,
    coalesce(:changes, '') != '' as changes_only
),
named as materialized (
  -- the calls that name it (file_calls: each file a tool call names, by its path and its name)
  select f.message_id, f.call, f.file, f.changed from file_calls f indexed by file_calls_file, inputs i
  where f.file = i.path and (not i.changes_only or f.changed)
  union
  select f.message_id, f.call, f.file, f.changed from file_calls f indexed by file_calls_name, inputs i
  where i.name_only and f.name = i.path and (not i.changes_only or f.changed)
),
calls as materialized (
  -- newest first by the message's time, else its session's start (documents.timestamp: no JSON read)
  select m.document_id, m.seq, m.role, n.call, n.file, n.changed, m.tool_calls,
    coalesce(m.timestamp, strftime('%Y-%m-%dT%H:%M:%SZ', d.timestamp, 'unixepoch')) as at
  from named n
  cross join messages m on m.id = n.message_id  -- (cross join: in this order, from the calls that name it)
  cross join documents d on d.id = m.document_id
),
total as materialized (select count(*) as n from calls),
page as materialized (
  select c.* from calls c order by c.at desc, c.document_id desc, c.seq desc
  limit (select size from inputs) offset (select skip from inputs)
)
select
  p.document_id, d.title, coalesce(d.extra ->> '$.agent', d.type) as agent, d.extra ->> '$.project' as project,
  p.seq, coalesce(p.at, d.extra ->> '$.started') as timestamp, p.role,
  p.tool_calls ->> ('$[' || p.call || '].name') as tool, p.file,
  p.tool_calls -> ('$[' || p.call || '].commands') as commands,
  p.changed,
  case when p.changed then coalesce(p.tool_calls -> ('$[' || p.call || '].edits'), '[]') else '[]' end as edits,
  t.n as total,
  i.skip + i.size < t.n as has_more,
  case when i.skip + i.size < t.n then i.skip + i.size end as next_offset
from page p
join documents d on d.id = p.document_id
cross join inputs i
cross join total t
order by p.at desc, p.document_id desc, p.seq desc
