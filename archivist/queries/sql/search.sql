-- search: the unified faceted search (SPEC §3). It answers one row, `response`: the whole
-- answer as JSON (total, page, results, facets, filters), as /api/search and MCP return it.
--
-- The steps, each a group of CTEs below, in order:
--   1. inputs, plan         the parameters parsed; the ranking the mode asks for (keyword,
--                           semantic, hybrid, similar or newest first) and how deep it ranks
--   2. filter words         kind, type, date, tags and products as words of the FTS column
--                           filter_tokens (ingest.filter_tokens), so that the FTS engine
--                           applies the filters while it matches: date_filter .. filter_groups
--   3. fts_words,           the query's words and the filters as FTS expressions, one per
--      fts_expressions      ranking ('""', which matches nothing, where a ranking is not used)
--   4. cut_by_time          documents on a day that a bound with a time of day cuts
--   5. keyword ranking      BM25: every word first, then some words (every_word_* ..
--                           keyword_ranking, keyword_total)
--   6. semantic ranking     the query's vector, nearest chunks within the filters
--   7. similar ranking      the documents nearest to one document (mode=similar)
--   8. hybrid_ranking       reciprocal-rank fusion of the keyword and semantic rankings
--   9. newest first         matches or filters, newest first; no filter: the whole archive
--  10. ranked, total        the chosen ranking's documents in order, and how many match
--  11. page                 the requested page's documents, with excerpts, as JSON
--  12. facets               counts over the first 200 ranked documents
--  13. the response         one JSON object

-- 1. inputs, plan ---------------------------------------------------------------------------
with inputs as materialized (
  -- every parameter trimmed and parsed: lists as JSON arrays, dates as Unix seconds
  select
    trim(:query) as query,
    coalesce(nullif(lower(trim(:mode)), ''), 'hybrid') as mode,
    case when lower(trim(:match_mode)) = 'raw' then 'raw' else 'all' end as match_mode,
    lower(trim(:match_all)) in ('1', 'true', 'yes', 'on') as match_all,
    archivist_list(:entities, 'lower') as entities,
    archivist_list(:types) as types,
    archivist_list(:tags, 'tag') as tags,
    archivist_list(:product_ids) as product_ids,
    archivist_list(:agents, 'lower') as agents,
    archivist_list(:projects) as projects,
    archivist_list(:models) as models,
    archivist_list(:files) as files,
    archivist_time(:start_date, 0) as start_at,
    archivist_time(:end_date, 1) as end_at,
    cast(nullif(trim(:min_similarity), '') as real) as min_similarity,
    max(1, cast(coalesce(nullif(trim(:page), ''), '1') as integer)) as page,
    archivist_limit(coalesce(nullif(trim(:page_size), ''), nullif(trim(:limit), ''), ''), 10, 100) as page_size
),
plan as materialized (
  -- how results are ordered: keyword, semantic, hybrid, similar, or newest first
  select *,
    case
      when mode in ('scan', 'faceted') then case when query != '' then 'hybrid' else 'newest' end
      when mode in ('recent', 'tag') then 'newest'
      else mode
    end as ranking,
    max(200, page * page_size) as depth  -- rows ranked: the page, and the facets' 200
  from inputs
),

-- 2. filter words ---------------------------------------------------------------------------
date_filter as materialized (
  -- the time filter as FTS words (whole years, months, days) and the days a bound cuts
  select archivist_date_words(
    start_at, end_at, (select min(timestamp) from documents), (select max(timestamp) from documents)
  ) as spec
  from inputs
),
kind_prefixes as (
  -- kinds are k<kind>; record entity types are k<kind>t<type> (bug: krecordt627567)
  select
    case when value in ('conversation', 'report', 'memory', 'record', 'note')
      then 'k' || value else 'krecordt' || hex(value) end as prefix,
    case when value in ('conversation', 'report', 'memory', 'record', 'note')
      then null else hex(value) end as fixed_type
  from inputs, json_each(inputs.entities)
  union all
  select '', null from inputs where entities = '[]'
),
type_codes as (
  select hex(value) as type_hex from inputs, json_each(inputs.types)
  union all
  select null from inputs where types = '[]'
),
date_words as (
  select value as word from date_filter, json_each(date_filter.spec, '$.words')
  union all
  select '' from date_filter where spec is null
),
scope_words as (
  -- kind, type and date make one word per combination (ingest.filter_tokens):
  -- bugs of May 2024 are krecordt627567m202405, a short list in the index
  select distinct k.prefix || case when k.fixed_type is null then coalesce('t' || t.type_hex, '') else '' end || w.word as word
  from kind_prefixes k, type_codes t, date_words w
  where k.fixed_type is null or t.type_hex is null or t.type_hex = k.fixed_type
),
filter_groups (part) as (
  -- one OR group per filter (scope, tags, products), ANDed below;
  -- no document carries the word "x": filters that exclude everything match nothing
  select '(' || coalesce((select group_concat(word, ' OR ') from scope_words where word != ''), 'x') || ')'
  from inputs, date_filter
  where inputs.entities != '[]' or inputs.types != '[]' or date_filter.spec is not null
  union all
  select '(' || (
    select group_concat('g' || hex(value), case when match_all then ' AND ' else ' OR ' end)
    from json_each(tags)
  ) || ')' from inputs where tags != '[]'
  union all
  select '(' || (select group_concat('p' || cast(value as integer), ' OR ') from json_each(product_ids)) || ')'
  from inputs where product_ids != '[]'
  union all
  -- conversations by agent, project (a path, or its last folder's name), model and file
  -- touched (a path, or a file name): any of each list (ingest.filter_tokens)
  select '(' || (select group_concat('a' || hex(value), ' OR ') from json_each(agents)) || ')'
  from inputs where agents != '[]'
  union all
  select '(' || (
    select group_concat('j' || hex(rtrim(value, '/')), ' OR ') from json_each(projects)
  ) || ')' from inputs where projects != '[]'
  union all
  select '(' || (select group_concat('o' || hex(value), ' OR ') from json_each(models)) || ')'
  from inputs where models != '[]'
  union all
  select '(' || (select group_concat('f' || hex(value), ' OR ') from json_each(files)) || ')'
  from inputs where files != '[]'
),

-- 3. fts_words, fts_expressions -----------------------------------------------------------
fts_words as materialized (
  -- the query's words as FTS expressions (all of them / any of them), and the filters' words
  select
    -- raw queries keep to the title and body as a whole (archivist_fts does it per term)
    case when i.query != '' then case i.match_mode when 'raw' then '{title body} : ' else '' end
      || '(' || archivist_fts(i.query, i.match_mode) || ')' end as all_words,
    case when i.query != '' then case i.match_mode when 'raw' then '{title body} : ' else '' end
      || '(' || archivist_fts(i.query, case i.match_mode when 'raw' then 'raw' else 'any' end) || ')' end as any_words,
    (select group_concat(part, ' AND ') from filter_groups) as filter_words,
    -- a conversation's messages are searched with any of the words (raw queries name
    -- columns that messages do not have: their hits name no message)
    case when i.query != '' and i.match_mode != 'raw'
      then '(' || archivist_fts(i.query, 'any') || ')' end as message_words
  from inputs i
),
fts_expressions as materialized (
  -- one expression per use; '""' (matches nothing) where the ranking does not need it,
  -- since the FTS engine runs any expression it is given
  select
    case when ranking in ('keyword', 'hybrid') then coalesce(all_and_filters, '""') else '""' end as every_word,
    case when ranking in ('keyword', 'hybrid') then coalesce(any_and_filters, '""') else '""' end as some_words,
    -- newest first: filters of one group (one kind, bugs of May) read filters_by_time
    -- backwards and stop early; words, or several filters ANDed (usually few
    -- matches, and a forward intersection is faster), sort their matches by time
    case when ranking = 'newest' and (all_words is not null or filter_words like '% AND %')
      then all_and_filters else '""' end as newest_matches,
    case when ranking = 'newest' and all_words is null and filter_words not like '% AND %'
      then filter_words else '""' end as newest_by_time,
    case when ranking in ('semantic', 'hybrid', 'similar') then coalesce(filters, '""') else '""' end as filters,
    coalesce(highlight, '""') as highlight,
    coalesce(message_words, '""') as message_words,
    all_and_filters is null as everything  -- no words and no filters
  from (
    select
      all_words,
      coalesce(all_words || coalesce(' AND ' || filters, ''), filters) as all_and_filters,
      any_words || coalesce(' AND ' || filters, '') as any_and_filters,
      coalesce(any_words, all_words) as highlight,
      filters,
      filter_words,
      message_words
    from (select *, 'filter_tokens : (' || filter_words || ')' as filters from fts_words)
  ), plan
),

-- 4. cut_by_time ----------------------------------------------------------------------------
cut_by_time as materialized (
  -- documents on a day that a bound with a time of day cuts, outside that time
  select d.id
  from date_filter, inputs, json_each(date_filter.spec, '$.edge_days') edge
  join documents d on d.day = edge.value
  where not (
    d.date_precision = 'second'
    and d.timestamp between coalesce(inputs.start_at, d.timestamp) and coalesce(inputs.end_at, d.timestamp)
  )
),

-- 5. keyword ranking ------------------------------------------------------------------------
every_word_matches as materialized (
  -- every match of every word, ranked once: the total, the ranked list and membership come from it
  select rowid as id, bm25(documents_fts, 1.0, 1.0, 0.0) as rank
  from documents_fts
  where documents_fts match (select every_word from fts_expressions)
    and rowid not in (select id from cut_by_time)
),
every_word_top as materialized (
  select id, rank from every_word_matches order by rank limit (select depth from plan)
),
every_word_total as materialized (
  select count(*) as n from every_word_matches
),
some_words_top as materialized (
  -- documents with some of the words: only read when fewer than 100 have every word
  select rowid as id, bm25(documents_fts, 1.0, 1.0, 0.0) as rank
  from documents_fts
  where documents_fts match (
    select case when (select n from every_word_total) < 100 then some_words else '""' end from fts_expressions
  )
    and rowid not in (select id from cut_by_time)
  order by rank
  limit 100
),
keyword_ranking as materialized (
  -- every word first; under 100 such documents, documents with some words fill up to 100
  select id, rank, position from (
    select id, rank, row_number() over (order by tier, rank, id) as position
    from (
      select id, rank, 0 as tier from every_word_top
      union all
      select id, rank, 1 from some_words_top where id not in (select id from every_word_top)
    )
  )
  where position <= max(100, (select n from every_word_total))
),
keyword_total as materialized (
  select case when n >= 100 then n else (select count(*) from keyword_ranking) end as n
  from every_word_total
),

-- 6. semantic ranking -----------------------------------------------------------------------
query_vector as materialized (
  select case when ranking in ('semantic', 'hybrid') then archivist_embed(query) end as vector from plan
),
filtered_documents as materialized (
  -- with filters, only the documents they match are searched by meaning
  select f.rowid as id
  from documents_fts f
  where documents_fts match (select filters from fts_expressions)
    and f.rowid not in (select id from cut_by_time)
),
filtered_ids as materialized (
  -- those documents' chunks and ids, as the vector search takes them (null: no filter)
  select
    case when (select filters from fts_expressions) != '""' then
      (select json_group_array(c.id) from filtered_documents a join chunks c on c.document_id = a.id)
    end as chunks,
    case when (select filters from fts_expressions) != '""' then
      (select json_group_array(cast(id as text)) from filtered_documents)
    end as documents
),
semantic_ranking as materialized (
  -- each document's nearest chunk (its similarity and its passage), nearest documents first
  select id, similarity, start, "end", row_number() over (order by similarity desc, id) as position
  from (
    select c.document_id as id, max(n.value ->> 1) as similarity, c.start, c."end"
    from json_each(archivist_nearest(
      (select vector from query_vector), 'archivist_chunks', 300, (select chunks from filtered_ids)
    )) n
    join chunks c on c.id = n.value ->> 0
    group by c.document_id
    -- the floor keeps unrelated documents out of totals and facets (bench/similarity_floor.py)
    having similarity >= coalesce((select min_similarity from inputs), archivist_similarity_floor())
    order by similarity desc
    limit 100
  )
),

-- 7. similar ranking ------------------------------------------------------------------------
similar_seed as (
  -- include: _document_id.sql
),
similar_ranking as materialized (
  -- the documents nearest to the seed's own vector, the seed left out
  select id, similarity, row_number() over (order by similarity desc, id) as position
  from (
    select cast(n.value ->> 0 as integer) as id, n.value ->> 1 as similarity
    from json_each(archivist_nearest(
      (
        select e.embedding from embeddings e join collections c on c.id = e.collection_id
        where c.name = 'archivist_documents' and e.id = cast((select id from similar_seed) as text)
      ),
      'archivist_documents', 101, (select documents from filtered_ids)
    )) n
    where cast(n.value ->> 0 as integer) != (select id from similar_seed)
      and n.value ->> 1 >= coalesce((select min_similarity from inputs), -1)
    order by similarity desc
    limit 100
  )
),

-- 8. hybrid_ranking -------------------------------------------------------------------------
hybrid_ranking as (
  -- reciprocal-rank fusion: 1 / (10 + position) from each ranking a document is in
  -- (k = 10 beat 20 and 60 on SciFact's train split: bench/retrieval_quality.py)
  select id, sum(1.0 / (10 + position)) as rrf
  from (select id, position from keyword_ranking union all select id, position from semantic_ranking)
  group by id
),

-- 9. newest first ---------------------------------------------------------------------------
newest_matches as materialized (
  -- words as a filter (or several filters ANDed): their matches, newest first
  select d.id, d.timestamp
  from documents_fts f
  join documents d on d.id = f.rowid
  where documents_fts match (select newest_matches from fts_expressions)
    and f.rowid not in (select id from cut_by_time)
  order by d.timestamp desc, d.id desc
  limit (select depth from plan)
),
newest_by_time as materialized (
  -- filters alone: filters_by_time's rowid is a time key (schema.TIME_KEY: seconds,
  -- then the id in the low 26 bits), so reading it backwards is newest first
  select rowid % 67108864 as id, rowid as time_key
  from filters_by_time
  where filters_by_time match (select newest_by_time from fts_expressions)
    and rowid % 67108864 not in (select id from cut_by_time)
  order by rowid desc
  limit (select depth from plan)
),
newest_total as materialized (
  -- fewer matches than were listed: the list is all of them
  select case
    when (select count(*) from newest_matches) + (select count(*) from newest_by_time) < (select depth from plan)
      then (select count(*) from newest_matches) + (select count(*) from newest_by_time)
    else (
      select count(*) from documents_fts
      where documents_fts match (select newest_matches from fts_expressions)
        and rowid not in (select id from cut_by_time)
    ) + (
      select count(*) from filters_by_time
      where filters_by_time match (select newest_by_time from fts_expressions)
        and rowid % 67108864 not in (select id from cut_by_time)
    ) end as n
),
newest_of_all as materialized (
  -- no words and no filters: the whole archive, newest first, by the timestamp index
  -- (LIMIT 0 otherwise: a constant WHERE would not stop the index walk)
  select id
  from documents
  order by timestamp desc, id desc
  limit (select case when ranking = 'newest' and everything then depth else 0 end from plan, fts_expressions)
),

-- 10. ranked, total -------------------------------------------------------------------------
ranked as materialized (
  -- the chosen ranking's documents in order, (id, score, position); the others are empty
  select id, -rank as score, position from keyword_ranking where (select ranking from plan) = 'keyword'
  union all
  select id, similarity, position from semantic_ranking where (select ranking from plan) = 'semantic'
  union all
  select id, similarity, position from similar_ranking
  union all
  select id, rrf, row_number() over (order by rrf desc, id)
  from hybrid_ranking where (select ranking from plan) = 'hybrid'
  union all
  select id, null, row_number() over (order by timestamp desc, id desc) from newest_matches
  union all
  select id, null, row_number() over (order by time_key desc) from newest_by_time
  union all
  select id, null, row_number() over (order by timestamp desc, id desc)
  from (select id, timestamp from documents where id in (select id from newest_of_all))
),
total as materialized (
  -- how many documents match, beyond those ranked
  select case plan.ranking
    when 'keyword' then (select n from keyword_total)
    when 'semantic' then (select count(*) from semantic_ranking)
    when 'similar' then (select count(*) from similar_ranking)
    when 'hybrid' then (select n from keyword_total) + (
      -- documents found only by meaning
      select count(*) from semantic_ranking s
      where s.id not in (select id from keyword_ranking) and s.id not in (select id from every_word_matches)
    )
    else case when (select everything from fts_expressions)
      then (select count(*) from documents) else (select n from newest_total) end
  end as n
  from plan
),

-- 11. page ----------------------------------------------------------------------------------
page_rows as (
  select r.id, r.score, r.position,
    -- found by its words: its excerpt is a highlighted snippet (else a passage)
    r.id in (select id from keyword_ranking) or (select newest_matches from fts_expressions) != '""' as by_words
  from ranked r, plan
  where r.position > (plan.page - 1) * plan.page_size
  order by r.position
  limit (select page_size from plan)
),
page_results as (
  select json_group_array(json(item)) as items
  from (
    select json_object(
      'kind', d.kind,
      'entity_type', d.type,
      'entity_id', d.external_id,
      'id', d.id,
      'title', d.title,
      'score', round(r.score, 6),
      'rank', r.position,
      'date', d.date,
      'created_at', d.created_at,
      'tags', json(d.tags),
      'product_id', d.product_id,
      'path', d.path,
      -- the excerpt: the words highlighted, else the passage found by meaning, else the start
      'excerpt', coalesce(
        (
          select snippet(documents_fts, 1, '<mark>', '</mark>', '...', case plan.mode when 'scan' then 12 else 32 end)
          from documents_fts
          where documents_fts match (select case when r.by_words then highlight else '""' end from fts_expressions)
            and rowid = d.id
        ),
        (
          select archivist_excerpt(substr(d.body, s.start + 1, s."end" - s.start), '', case plan.mode when 'scan' then 80 else 200 end)
          from semantic_ranking s where s.id = d.id
        ),
        archivist_excerpt(d.body, '', case plan.mode when 'scan' then 80 else 200 end)
      ),
      -- a conversation read from an agent log: the message that matches best, and its link
      'message', json((
        select json_object(
          'index', m.seq, 'role', m.role, 'timestamp', m.timestamp,
          'snippet', snippet(messages_fts, 0, '<mark>', '</mark>', '...', 24),
          'link', '/document/' || d.id || '?m=' || m.seq || '#m' || m.seq
        )
        from messages_fts
        join messages m on m.id = messages_fts.rowid
        where d.kind = 'conversation' and d.source like 'log:%'
          and messages_fts match (select case when r.by_words then message_words else '""' end from fts_expressions)
          and messages_fts.rowid between d.id * 1048576 and d.id * 1048576 + 1048575
        order by messages_fts.rank, m.seq
        limit 1
      ))
    ) as item
    from page_rows r
    cross join documents d on d.id = r.id  -- the page first, then its documents by id
    cross join plan
    order by r.position
  )
),

-- 12. facets --------------------------------------------------------------------------------
facet_rows as materialized (
  select d.kind, d.type, d.month, d.day, d.tags, d.product_id
  from ranked r join documents d on d.id = r.id
  where r.position <= 200
),
facet_counts as (
  select json_object(
    'kind', (select json_group_object(kind, n) from (
      select kind, count(*) as n from facet_rows group by kind order by n desc, kind)),
    'type', (select json_group_object(type, n) from (
      select type, count(*) as n from facet_rows where type is not null group by type order by n desc, type)),
    'month', (select json_group_object(month, n) from (
      select month, count(*) as n from facet_rows where month is not null group by month order by month desc)),
    'day', (select json_group_object(day, n) from (
      select day, count(*) as n from facet_rows where day is not null group by day order by day desc)),
    'tags', (select json_group_object(tag, n) from (
      select t.value as tag, count(*) as n from facet_rows, json_each(facet_rows.tags) t
      group by t.value order by n desc, t.value limit 50)),
    'product_id', (select json_group_object(product_id, n) from (
      select product_id, count(*) as n from facet_rows where product_id is not null
      group by product_id order by n desc, product_id limit 50))
  ) as counts
)

-- 13. the response --------------------------------------------------------------------------
select json_object(
  'query', plan.query,
  'mode', plan.mode,
  'total', total.n,
  'page', plan.page,
  'page_size', plan.page_size,
  'total_pages', (total.n + plan.page_size - 1) / plan.page_size,
  'has_more', json(case when plan.page * plan.page_size < total.n then 'true' else 'false' end),
  'results', json(coalesce((select items from page_results), '[]')),
  'facets', json((select counts from facet_counts)),
  'filters', json_object(
    'entities', json(plan.entities),
    'types', json(plan.types),
    'tags', json(plan.tags),
    'match_all', json(case when plan.match_all then 'true' else 'false' end),
    'start_date', strftime('%Y-%m-%dT%H:%M:%SZ', plan.start_at, 'unixepoch'),
    'end_date', strftime('%Y-%m-%dT%H:%M:%SZ', plan.end_at, 'unixepoch'),
    'product_ids', json(plan.product_ids),
    'agents', json(plan.agents),
    'projects', json(plan.projects),
    'models', json(plan.models),
    'files', json(plan.files),
    'match_mode', case plan.match_mode when 'raw' then 'raw' else 'simple' end,
    'min_similarity', plan.min_similarity,
    'document', nullif(trim(:document), '')
  )
) as response
from plan, total
