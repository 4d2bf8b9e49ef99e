-- Kind, type and date filters are one word of the filter_tokens column (kconversation,
-- then t<hex type>, then m<YYYYMM> or d<YYYYMMDD>: kconversationt6465627567m202511),
-- so the FTS engine narrows the matches before ranking; only the top rows are joined.
with params as (
  select
    '(' || archivist_fts(:query, 'all') || ') AND filter_tokens : kconversation'
    || case when :conversation_type != '' then 't' || hex(:conversation_type) else '' end
    || case length(:date_range)
         when 7 then 'm' || replace(:date_range, '-', '')
         when 10 then 'd' || replace(:date_range, '-', '')
         else '' end
    as expression
),
hits as materialized (
  select rowid as id, bm25(documents_fts, 1.0, 1.0, 0.0) as rank
  from documents_fts
  where documents_fts match (select expression from params)
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
  (
    select snippet(documents_fts, 1, '<mark>', '</mark>', '...', 24)
    from documents_fts
    where documents_fts match (select expression from params) and rowid = d.id
  ) as excerpt
from hits
join documents d on d.id = hits.id
order by hits.rank, d.date desc
