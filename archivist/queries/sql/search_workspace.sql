-- Kind, type and date filters are one word of the filter_tokens column (kconversation,
-- then t<hex type>, then m<YYYYMM> or d<YYYYMMDD>: kconversationt6465627567m202511),
-- so the FTS engine narrows the matches before ranking; only the top rows are joined.
-- A conversation read from an agent log matches by its title and opening prompt or by
-- one of its messages (message_index holds the same filter words, dated by the message),
-- and ranks by its best.
with params as (
  select
    case when :conversation_type != '' then 't' || hex(:conversation_type) else '' end as type_word,
    case length(:date_range)
      when 7 then 'm' || replace(:date_range, '-', '')
      when 10 then 'd' || replace(:date_range, '-', '')
      else '' end as date_word
),
expressions as materialized (
  -- every message is a conversation's: its filter needs no kind word (a word on every
  -- message is a long list that FTS5 reads whole to rank)
  select
    '(' || archivist_fts(:query, 'all') || ') AND filter_tokens : kconversation' || type_word || date_word
      as documents,
    '(' || archivist_fts(:query, 'all', 'text') || ')'
      || coalesce(' AND filter_tokens : ' || nullif(type_word || date_word, ''), '') as messages
  from params
),
matches as materialized (
  select rowid as id, bm25(documents_fts, 1.0, 1.0, 0.0) as rank
  from documents_fts
  where documents_fts match (select documents from expressions)
  union all
  select rowid / 1048576, bm25(message_index, 1.0, 0.0)
  from message_index
  where message_index match (select messages from expressions)
),
hits as materialized (
  select id, min(rank) as rank
  from matches
  group by id
  order by rank
  limit archivist_limit(:limit, 20, 100)
)
select
  d.id,
  d.title as conversation,
  d.path,
  d.type,
  d.date,
  d.date_precision,
  round(-hits.rank, 4) as score,
  coalesce(
    (
      -- a session's best message
      select archivist_snippet(archivist_searched(m.text, m.tool_calls), :query, 24)
      from message_index i
      join messages m on m.id = i.rowid
      where message_index match (select messages from expressions)
        and i.rowid between d.id * 1048576 and d.id * 1048576 + 1048575
      order by i.rank
      limit 1
    ),
    (
      select snippet(documents_fts, 1, '<mark>', '</mark>', '...', 24)
      from documents_fts
      where documents_fts match (select documents from expressions) and rowid = d.id
    )
  ) as excerpt
from hits
join documents d on d.id = hits.id
order by hits.rank, d.date desc
