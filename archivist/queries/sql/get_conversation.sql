-- get_conversation: one conversation's messages in order, a page at a time (offset, limit).
--
-- One row per message of the page, each carrying the paging too (document_id, total,
-- has_more, next_offset), so that a plain list of rows (Datasette's JSON) says where the
-- next page starts. Thinking and raw tool output are null unless include names them. A
-- message's usage is the tokens of the model response it is (null where none is recorded),
-- its attachments what was attached (type, name, size: never the data).
-- A conversation written in the workspace has no messages rows: it is one message of
-- role 'document', its whole text.
with target as (
  -- include: _document_id.sql
),
inputs as materialized (
  select
    archivist_list(:include, 'lower') as include,
    max(0, cast(coalesce(nullif(trim(:offset), ''), '0') as integer)) as skip,
    archivist_limit(:limit, 50, 200) as size
),
conversation as materialized (
  select d.id, d.body, d.source like 'log:%' as from_log
  from documents d
  where d.id = (select id from target) and d.kind = 'conversation'
),
total as materialized (
  select case when c.from_log then (select count(*) from messages m where m.document_id = c.id) else 1 end as n
  from conversation c
),
log_page as (
  -- a session's messages, by the (document_id, seq) key
  select m.seq, m.role, m.timestamp, m.model, m.text, m.thinking, m.tool_output, m.tool_calls,
    case when m.input_tokens is not null then json_object(
      'input', m.input_tokens, 'output', m.output_tokens, 'cache_write', m.cache_write_tokens,
      'cache_read', m.cache_read_tokens, 'cost', m.cost
    ) end as usage,
    m.attachments
  from messages m
  where m.document_id = (select id from conversation where from_log)
  order by m.seq
  limit (select size from inputs) offset (select skip from inputs)
),
page as (
  select * from log_page
  union all
  select 0, 'document', null, null, c.body, '', '', '[]', null, '[]'
  from conversation c, inputs i
  where not c.from_log and i.skip = 0
)
select
  c.id as document_id,
  p.seq,
  p.role,
  p.timestamp,
  p.model,
  p.text,
  p.tool_calls,
  p.usage,
  p.attachments,
  case when exists (select 1 from json_each(i.include) where value = 'thinking') then p.thinking end as thinking,
  case when exists (select 1 from json_each(i.include) where value = 'tool_output') then p.tool_output end
    as tool_output,
  t.n as total,
  i.skip + i.size < t.n as has_more,
  case when i.skip + i.size < t.n then i.skip + i.size end as next_offset
from page p, conversation c, inputs i, total t
order by p.seq
