-- get_conversation: one conversation's messages in order, a page at a time (offset, limit).
--
-- One row per message of the page, each carrying the paging too (document_id, total,
-- has_more, next_offset), so that a plain list of rows (Datasette's JSON) says where the
-- next page starts. Thinking and raw tool output are null unless include names them. A
-- message's usage is the tokens of the model response it is (null where none is recorded),
-- its attachments what was attached (type, name, size: never the data), its price what it cost
-- at the price data's prices (null where it could not be priced; the usage's cost is what the
-- log says, Aider's). The session's own figures are on every row too: session_price (its
-- messages' prices summed; null where none could be priced) and session_stated_cost (what its
-- log says, summed; null where it says nothing); and on the page's first row, subagents (JSON:
-- the sub-agent sessions it started, and theirs, depth first, each with id, title, parent (the
-- id of the session that started it), depth (1: started by this one), started, messages,
-- tokens, price and stated_cost).
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
costs as materialized (
  select sum(m.price) as price, sum(m.cost) as stated_cost
  from messages m
  where m.document_id = (select id from conversation where from_log)
),
children as materialized (
  -- the sessions of its agent that name a parent (extra.parent: the key of the session that
  -- started them), read once: the tree below is walked among them alone
  select d.id, substr(d.path, length(d.type) + 2) as key, d.extra ->> '$.parent' as parent,
    coalesce(d.extra ->> '$.started', '') as started
  from conversation c
  join documents p on p.id = c.id
  join documents d indexed by documents_kind_type on d.kind = 'conversation' and d.type = p.type
  where c.from_log and d.extra ->> '$.parent' is not null
),
subagents(id, key, parent, depth, sort) as (
  select h.id, h.key, c.id, 1, printf('%s %012d', h.started, h.id)
  from conversation c
  join documents p on p.id = c.id
  join children h on h.parent = substr(p.path, length(p.type) + 2)
  union
  select h.id, h.key, s.id, s.depth + 1, s.sort || '/' || printf('%s %012d', h.started, h.id)
  from subagents s
  join children h on h.parent = s.key
  where s.depth < 8
),
tree as materialized (
  select coalesce(json_group_array(json(item)), '[]') as subagents
  from (
    select json_object(
      'id', d.id, 'title', d.title, 'parent', s.parent, 'depth', s.depth, 'started', d.extra ->> '$.started',
      'messages', (select count(*) from messages m where m.document_id = d.id),
      'tokens', coalesce(d.extra ->> '$.usage.input', 0) + coalesce(d.extra ->> '$.usage.output', 0)
        + coalesce(d.extra ->> '$.usage.cache_write', 0) + coalesce(d.extra ->> '$.usage.cache_read', 0),
      'price', (select sum(m.price) from messages m where m.document_id = d.id),
      'stated_cost', d.extra ->> '$.usage.cost'
    ) as item
    from (select distinct id, parent, depth, sort from subagents order by sort limit 500) s
    join documents d on d.id = s.id
    order by s.sort
  )
),
log_page as (
  -- a session's messages, by the (document_id, seq) key
  select m.seq, m.role, m.timestamp, m.model, m.text, m.thinking, m.tool_output, m.tool_calls,
    case when m.input_tokens is not null then json_object(
      'input', m.input_tokens, 'output', m.output_tokens, 'cache_write', m.cache_write_tokens,
      'cache_read', m.cache_read_tokens, 'cost', m.cost
    ) end as usage,
    m.attachments, m.price
  from messages m
  where m.document_id = (select id from conversation where from_log)
  order by m.seq
  limit (select size from inputs) offset (select skip from inputs)
),
page as materialized (
  select * from log_page
  union all
  select 0, 'document', null, null, c.body, '', '', '[]', null, '[]', null
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
  p.price,
  case when exists (select 1 from json_each(i.include) where value = 'thinking') then archivist_text(p.thinking) end
    as thinking,
  case when exists (select 1 from json_each(i.include) where value = 'tool_output') then archivist_text(p.tool_output)
    end as tool_output,
  t.n as total,
  i.skip + i.size < t.n as has_more,
  case when i.skip + i.size < t.n then i.skip + i.size end as next_offset,
  k.price as session_price,
  k.stated_cost as session_stated_cost,
  case when p.seq = (select min(seq) from page) then (select subagents from tree) end as subagents
from page p, conversation c, inputs i, total t, costs k
order by p.seq
