-- search: the unified faceted search (SPEC §3). It answers one row, `response`: the whole
-- answer as JSON (total, page, results, facets, filters), as /api/search and MCP return it.
--
-- The steps, each a group of CTEs below, in order:
--   1. inputs, plan         the parameters parsed; the ranking the mode asks for (keyword,
--                           semantic, hybrid, similar or newest first) and how deep it ranks
--   2. filter words         kind, type, date, tags, products, agents, projects, models and
--                           files as words of the FTS column filter_tokens
--                           (ingest.filter_tokens), so that the FTS engine applies the
--                           filters while it matches: date_filter, filter_groups
--   3. fts_words,           the query's words and the filters as FTS expressions, one per
--      fts_expressions      ranking ('""', which matches nothing, where a ranking is not used)
--   4. cut_by_time          documents on a day that a bound with a time of day cuts
--   5. keyword ranking      BM25: every word first, then some words (every_word_* ..
--                           keyword_ranking, keyword_total); a conversation read from an
--                           agent log matches by its title and opening prompt, or by a
--                           message (message_index), and ranks by its best
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
filter_groups as materialized (
  -- the filters as FTS words (archivist_filter_words: ingest.filter_tokens's words, one OR
  -- group per filter, ANDed): for documents, for messages (which hold all but the files a
  -- session touched), and the files group
  select archivist_filter_words(json_object(
    'entities', json(entities), 'types', json(types), 'tags', json(tags), 'match_all', match_all,
    'product_ids', json(product_ids), 'agents', json(agents), 'projects', json(projects),
    'models', json(models), 'files', json(files)
  ), (select spec from date_filter)) as spec
  from inputs
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
    (select spec ->> 'documents' from filter_groups) as filter_words,
    -- an agent log's messages are searched one by one (message_index), with the filters
    -- they hold (a raw query that names a column of documents finds no message)
    case when i.query != '' then '(' || archivist_fts(i.query, i.match_mode, 'text') || ')' end as message_all,
    case when i.query != '' then '(' || archivist_fts(
      i.query, case i.match_mode when 'raw' then 'raw' else 'any' end, 'text'
    ) || ')' end as message_any,
    (select 'filter_tokens : (' || (spec ->> 'messages') || ')' from filter_groups) as message_filters,
    (select 'filter_tokens : (' || (spec ->> 'files') || ')' from filter_groups) as session_files
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
    -- messages: every word (keyword and hybrid rankings, and words newest first), some
    -- words (the ranking's fill, and the message a hit names)
    case when ranking in ('keyword', 'hybrid', 'newest') then coalesce(message_every, '""') else '""' end as message_every,
    case when ranking in ('keyword', 'hybrid') then coalesce(message_some, '""') else '""' end as message_some,
    coalesce(message_some, '""') as message_best,
    session_files,
    all_and_filters is null as everything  -- no words and no filters
  from (
    select
      all_words,
      coalesce(all_words || coalesce(' AND ' || filters, ''), filters) as all_and_filters,
      any_words || coalesce(' AND ' || filters, '') as any_and_filters,
      coalesce(any_words, all_words) as highlight,
      filters,
      filter_words,
      message_all || coalesce(' AND ' || message_filters, '') as message_every,
      message_any || coalesce(' AND ' || message_filters, '') as message_some,
      session_files
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
session_file_matches as materialized (
  -- the sessions whose touched files a filter names: a message hit counts only in them
  select rowid as id from documents_fts
  where documents_fts match (select coalesce(session_files, '""') from fts_expressions)
),
every_word_hits as materialized (
  -- documents with every word (a session: its title and opening prompt), and messages of
  -- agent logs with every word, as their sessions' ids (and the message's own)
  select rowid as id, bm25(documents_fts, 1.0, 1.0, 0.0) as rank, null as message_id
  from documents_fts
  where documents_fts match (select every_word from fts_expressions)
  union all
  select rowid / 1048576, bm25(message_index, 1.0, 0.0), rowid
  from message_index
  where message_index match (select message_every from fts_expressions)
),
every_word_matches as materialized (
  -- every match of every word, ranked once: the total, the ranked list and membership come
  -- from it; a session ranks by its best message, which its hit names (SQLite takes a bare
  -- column from the row of the min()); files= is its sessions' filter
  select id, min(rank) as rank, message_id
  from every_word_hits
  where id not in (select id from cut_by_time)
    and ((select session_files from fts_expressions) is null or id in (select id from session_file_matches))
  group by id
),
every_word_top as materialized (
  select id, rank, message_id from every_word_matches order by rank limit (select depth from plan)
),
every_word_total as materialized (
  select count(*) as n from every_word_matches
),
some_word_hits as materialized (
  -- documents and messages with some of the words: only read when fewer than 100 have every
  -- word (messages: and when the query has several words; one word is the pass above)
  select rowid as id, bm25(documents_fts, 1.0, 1.0, 0.0) as rank, null as message_id
  from documents_fts
  where documents_fts match (
    select case when (select n from every_word_total) < 100 then some_words else '""' end from fts_expressions
  )
  union all
  select rowid / 1048576, bm25(message_index, 1.0, 0.0), rowid
  from message_index
  where message_index match (
    select case when (select n from every_word_total) < 100 and message_some != message_every
      then message_some else '""' end
    from fts_expressions
  )
),
some_words_top as materialized (
  select id, min(rank) as rank, message_id
  from some_word_hits
  where id not in (select id from cut_by_time)
    and ((select session_files from fts_expressions) is null or id in (select id from session_file_matches))
  group by id
  order by rank
  limit 100
),
keyword_ranking as materialized (
  -- every word first; under 100 such documents, documents with some words fill up to 100
  select id, rank, position, message_id from (
    select id, rank, message_id, row_number() over (order by tier, rank, id) as position
    from (
      select id, rank, message_id, 0 as tier from every_word_top
      union all
      select id, rank, message_id, 1 from some_words_top where id not in (select id from every_word_top)
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
newest_candidates as materialized (
  -- words as a filter (or several filters ANDed): the documents they match, and the
  -- sessions with a message holding every word
  select rowid as id from documents_fts
  where documents_fts match (select newest_matches from fts_expressions)
  union
  select id from every_word_matches where (select ranking from plan) = 'newest'
),
newest_matches as materialized (
  -- those matches, newest first
  select d.id, d.timestamp
  from newest_candidates c
  join documents d on d.id = c.id
  where c.id not in (select id from cut_by_time)
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
      select count(*) from newest_candidates where id not in (select id from cut_by_time)
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
    k.id is not null or (select newest_matches from fts_expressions) != '""' as by_words,
    k.message_id  -- the message its words were found in, if they were
  from ranked r
  cross join plan
  left join keyword_ranking k on k.id = r.id
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
            'snippet', archivist_snippet(m.text, plan.query, 24),
            'link', '/document/' || d.id || '?m=' || m.seq || '#m' || m.seq
          )
          from messages m
          where m.id = coalesce(r.message_id, (
            -- found otherwise (its title, its meaning, newest first): its best message for the words
            select rowid from message_index
            where r.message_id is null and d.kind = 'conversation' and d.source like 'log:%'
              and message_index match (select case when r.by_words then message_best else '""' end from fts_expressions)
              and rowid between d.id * 1048576 and d.id * 1048576 + 1048575
            order by rank, rowid
            limit 1
          ))
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
  select d.kind, d.type, d.month, d.day, d.tags, d.product_id,
    -- an agent log's conversation: its agent, project and models
    case when d.source like 'log:%' then d.extra end as session
  from ranked r join documents d on d.id = r.id
  where r.position <= 200
),
facet_values as (
  -- each ranked document's value of every facet (tags and models: each of theirs), read
  -- from facet_rows once: SQLite plans a CTE again for each place that names it
  select v.key as facet, coalesce(t.value, v.value) as value
  from facet_rows r, json_each(json_object(
    'kind', r.kind, 'type', r.type, 'month', r.month, 'day', r.day, 'tags', json(r.tags),
    'product_id', r.product_id, 'agent', r.session ->> 'agent', 'project', r.session ->> 'project',
    'model', json(coalesce(r.session ->> '$.models', '[]'))
  )) v
  left join json_each(case when v.type = 'array' then v.value end) t
  where coalesce(t.value, v.value) is not null and (v.type != 'array' or t.value is not null)
),
facet_groups as (
  -- counts per facet and value, most first (months and days newest first); 50 at most per facet
  select facet, value, n from (
    select facet, value, n, row_number() over (
      partition by facet
      order by case when facet in ('month', 'day') then 0 else -n end, case when facet in ('month', 'day') then value end desc, value
    ) as position
    from (select facet, value, count(*) as n from facet_values group by facet, value)
  )
  where position <= 50 or facet in ('kind', 'type', 'month', 'day', 'agent')
  order by facet, position
),
facet_counts as (
  select json_group_object(names.facet, json(coalesce(g.counts, '{}'))) as counts
  from (
    select column1 as facet, column2 as position from (values
      ('kind', 1), ('type', 2), ('month', 3), ('day', 4), ('tags', 5), ('product_id', 6),
      ('agent', 7), ('project', 8), ('model', 9))
  ) names
  left join (
    select facet, json_group_object(value, n) as counts from facet_groups group by facet
  ) g on g.facet = names.facet
  order by names.position
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
