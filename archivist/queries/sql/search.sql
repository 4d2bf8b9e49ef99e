-- search: the unified faceted search (docs/contract.md: canned queries). It answers one row, `response`: the whole
-- answer as JSON, as /api/search and MCP return it: output=full (the default here) gives query,
-- mode, total (and matched, its split), sort, page, results, facets and filters; output=brief
-- (theirs) the query, the mode, the total and its split, the page and, per result, what a list
-- shows (id, kind, type, entity_type and entity_id, a memory's tags, agent, title, date, score,
-- rank, how it matched, message, a snippet), each seed's fields included. Both answers' fields
-- are declared once, in archivist/queries/response.py.
--
-- The steps, each a group of CTEs below, in order:
--   1. inputs, plan         the parameters parsed; the ranking the mode asks for (keyword,
--                           semantic, hybrid, similar or newest first) and how deep it ranks
--                           (every match, where a sort needs them all)
--   2. the words            the list filters (archivist/queries/filters.py) and the dates
--                           as words of the FTS column filter_tokens
--                           (archivist/vocabulary.py), so that the FTS engine applies the
--                           filters while it matches, and the query's words, as one FTS
--                           expression per use (search_words, fts_expressions)
--   3. cut_by_time          documents on a day that a bound with a time of day cuts
--   4. keyword ranking      BM25: every word first, then some words (every_word_* ..
--                           keyword_ranking, with its total and how many of each); a
--                           conversation read from an agent log matches by its title and
--                           opening prompt, or by a message (message_index), and ranks by
--                           its best
--   5. semantic ranking     the query's vector, nearest chunks within the filters
--   6. similar ranking      the documents nearest to one document (mode=similar)
--   7. scored               the keyword and semantic rankings side by side, and their
--                           reciprocal-rank fusion (hybrid)
--   8. newest first         matches or filters, newest first; no filter: the whole archive
--   9. ranked, ordered      the chosen ranking's documents in order, how many match and how
--                           each matched (all the words, some, by meaning); then in the
--                           order asked for (sort: relevance, newest, oldest, tokens, cost)
--  10. listed               the page's results (brief or full) and the facets' counts, and
--                           the total split by how the results matched (summed)
--  11. the response         one JSON object
--
-- SQLite prepares a CTE again at every place that names it, with the CTEs it names: the
-- rankings and the steps after them are each named once (a new connection prepares this
-- in milliseconds), but for the keyword ranking, which ranked reads as it is for a keyword
-- search (sparing it the side-by-side scored) and scored for the others; what many places
-- read (plan, fts_expressions) names little.

-- 1. inputs, plan ------------------------------------------------------------------------------
with inputs as materialized (
  -- every parameter trimmed and parsed: lists as JSON arrays, dates as Unix seconds
  select
    trim(:query) as query,
    coalesce(nullif(lower(trim(:mode)), ''), 'hybrid') as mode,
    coalesce(nullif(lower(trim(:sort)), ''), 'relevance') as sort,
    -- brief: what a list of results shows; full (the default): every field, facets and filters
    case when lower(trim(:output)) = 'brief' then 'brief' else 'full' end as output,
    case when lower(trim(:match_mode)) = 'raw' then 'raw' else 'all' end as match_mode,
    lower(trim(:match_all)) in ('1', 'true', 'yes', 'on') as match_all,
    -- the list filters (archivist/queries/filters.py), each a JSON array
    -- include: filters.inputs
    archivist_time(:start_date, 0) as start_at,
    archivist_time(:end_date, 1) as end_at,
    cast(nullif(trim(:min_similarity), '') as real) as min_similarity,
    max(1, cast(coalesce(nullif(trim(:page), ''), '1') as integer)) as page,
    archivist_limit(coalesce(nullif(trim(:page_size), ''), nullif(trim(:limit), ''), ''), 10, 100) as page_size
),
ranking as materialized (
  -- how results are found and ranked: keyword, semantic, hybrid, similar, or newest first
  select *,
    case
      when mode in ('scan', 'faceted') then case when query != '' then 'hybrid' else 'newest' end
      when mode in ('recent', 'tag') then 'newest'
      else mode
    end as ranking
  from inputs
),
plan as materialized (
  -- sorted: a sort other than the ranking's own order, which must see every match, so the
  -- rankings then go all the way down; else they rank the page, and the facets' 200
  select *,
    case when sorted then 4294967296 else max(200, page * page_size) end as depth,
    100 as fill_below  -- fewer documents than this with every word: those with some are listed after
  from (
    select *, sort != 'relevance' and not (sort = 'newest' and ranking = 'newest') as sorted from ranking
  )
),

-- 2. the words ---------------------------------------------------------------------------------
search_inputs as materialized (
  -- the filters as FTS words (archivist/vocabulary.py's words, one OR group per filter, ANDed;
  -- a time filter as whole years, months and days) and the query's words, as the FTS
  -- expressions of each use (archivist_search_words says which); the archive's first and
  -- last times bound an open time filter. One function call, so that the many places that
  -- read the expressions each cost the statement little to prepare
  select json_object(
    'query', query, 'match_mode', match_mode, 'ranking', ranking,
    -- include: filters.spec
    'match_all', match_all,
    'start_at', start_at, 'end_at', end_at,
    'first', (select min(timestamp) from documents), 'last', (select max(timestamp) from documents)
  ) as given
  from plan
),
search_words as materialized (
  select archivist_search_words(given) as spec from search_inputs
),
fts_expressions as materialized (
  -- one expression per use; '""' (matches nothing) where the ranking does not need it:
  -- every_word and some_words (keyword ranking), newest_matches and newest_by_time (newest
  -- first: words or several filters, or the filters of one group read backwards by time),
  -- filters (semantic and similar rankings), highlight (excerpts), message_every,
  -- message_some and message_best (agent logs' messages), session_files (null: no files
  -- filter), everything (no words and no filters), edge_days (days a bound with a time cuts)
  select
    spec ->> 'every_word' as every_word,
    spec ->> 'some_words' as some_words,
    spec ->> 'newest_matches' as newest_matches,
    spec ->> 'newest_by_time' as newest_by_time,
    spec ->> 'filters' as filters,
    spec ->> 'highlight' as highlight,
    spec ->> 'message_every' as message_every,
    spec ->> 'message_some' as message_some,
    spec ->> 'message_best' as message_best,
    spec ->> 'session_files' as session_files,
    spec ->> 'everything' as everything,
    spec -> 'edge_days' as edge_days
  from search_words
),

weightless as materialized (
  -- the query's words that more than half the documents hold (in an archive of more than
  -- 1,000: a small one ranks them all): BM25 weighs such a word nothing, and a some-words pass
  -- that listed every document holding it would rank them all for nothing. Each is counted up
  -- to that half only, and only where a some-words pass runs (some_expressions)
  select json_group_array(t.value) as terms
  from plan, json_each(archivist_weighed_terms(plan.query, plan.match_mode, plan.ranking)) t,
    (select count(*) / 2 as half from documents) a
  where a.half > 500 and (
    select count(*) from (
      select 1 from documents_fts where documents_fts match '{title body} : ' || t.value
      limit (select count(*) / 2 + 1 from documents)
    )
  ) > a.half
),
some_expressions as materialized (
  -- the some-words expressions without the words that weigh nothing
  select spec ->> 'some_words' as some_words, spec ->> 'message_some' as message_some
  from (
    select archivist_search_words(json_set(given, '$.weightless', json((select terms from weightless)))) as spec
    from search_inputs
  )
),

-- 3. cut_by_time -------------------------------------------------------------------------------
cut_by_time as materialized (
  -- documents on a day that a bound with a time of day cuts, outside that time
  select d.id
  from fts_expressions, inputs, json_each(fts_expressions.edge_days) edge
  join documents d on d.day = edge.value
  where not (
    d.date_precision = 'second'
    and d.timestamp between coalesce(inputs.start_at, d.timestamp) and coalesce(inputs.end_at, d.timestamp)
  )
),
-- 4. keyword ranking ---------------------------------------------------------------------------
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
  -- every match of every word, ranked once: a session ranks by its best message, which its
  -- hit names (SQLite takes a bare column from the row of the min()); files= is its
  -- sessions' filter
  select id, min(rank) as rank, message_id
  from every_word_hits
  where id not in (select id from cut_by_time)
    and ((select session_files from fts_expressions) is null or id in (select id from session_file_matches))
  group by id
),
every_word_top as materialized (
  -- the best of them, as deep as the ranking goes, each with how many there are (n)
  select id, rank, message_id, (select count(*) from every_word_matches) as n
  from every_word_matches
  order by rank
  limit (select depth from plan)
),
some_word_hits as materialized (
  -- documents and messages with some of the words: only read when fewer than fill_below have every
  -- word (messages: and when the query has several words; one word is the pass above); the
  -- words that weigh nothing left out (some_expressions)
  select rowid as id, bm25(documents_fts, 1.0, 1.0, 0.0) as rank, null as message_id
  from documents_fts
  where documents_fts match (
    select case when coalesce((select n from every_word_top limit 1), 0) < (select fill_below from plan)
      and (select some_words from fts_expressions) != '""'
      then (select some_words from some_expressions) else '""' end
  )
  union all
  select rowid / 1048576, bm25(message_index, 1.0, 0.0), rowid
  from message_index
  where message_index match (
    select case when coalesce((select n from every_word_top limit 1), 0) < (select fill_below from plan)
      and message_some != message_every and message_some != '""'
      then (select message_some from some_expressions) else '""' end
    from fts_expressions
  )
),
some_word_matches as materialized (
  -- the documents with some of the words, each ranked once (those with every word among them)
  select id, min(rank) as rank, message_id
  from some_word_hits
  where id not in (select id from cut_by_time)
    and ((select session_files from fts_expressions) is null or id in (select id from session_file_matches))
  group by id
),
keyword_ranking as materialized (
  -- every word first (tier 0), then only some words (tier 1), as deep as the ranking goes; how
  -- many hold every word (all_words), how many only some (some_words: counted, and listed, when
  -- fewer than 100 hold every word, as every_word_top then holds them all; else null), and
  -- total, both
  select id, rank, message_id, tier, position, all_words, some_words, all_words + coalesce(some_words, 0) as total
  from (
    select id, rank, message_id, tier, row_number() over (order by tier, rank, id) as position,
      coalesce(max(n) over (), 0) as all_words,
      case when coalesce(max(n) over (), 0) < (select fill_below from plan)
        then count(*) filter (where tier = 1) over () end as some_words
    from (
      -- a document with every word is listed once, in the first tier (the row of the min())
      select id, min(tier) as tier, rank, message_id, n
      from (
        select id, rank, message_id, 0 as tier, n from every_word_top
        union all
        select id, rank, message_id, 1, null from some_word_matches
      )
      group by id
    )
  )
  where position <= (select depth from plan)
),

-- 5. semantic ranking --------------------------------------------------------------------------
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

-- 6. similar ranking ---------------------------------------------------------------------------
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

-- 7. scored ------------------------------------------------------------------------------------
scored as materialized (
  -- the keyword and semantic rankings side by side, a document per row, and their
  -- reciprocal-rank fusion: 1 / (10 + position) from each ranking a document is in
  -- (k = 10 beat 20 and 60 on SciFact's train split: bench/retrieval_quality.py)
  select id,
    min(keyword_position) as keyword_position, min(keyword_rank) as keyword_rank,
    min(message_id) as message_id, min(keyword_total) as keyword_total, min(keyword_tier) as keyword_tier,
    min(all_words) as all_words, min(some_words) as some_words,
    min(semantic_position) as semantic_position, min(similarity) as similarity,
    min(start) as start, min("end") as "end",
    sum(1.0 / (10 + coalesce(keyword_position, semantic_position))) as rrf
  from (
    select id, position as keyword_position, rank as keyword_rank, message_id, total as keyword_total,
      tier as keyword_tier, all_words, some_words, null as semantic_position, null as similarity, null as start,
      null as "end"
    from keyword_ranking
    where (select ranking from plan) != 'keyword'  -- (ranked reads a keyword ranking as it is)
    union all
    select id, null, null, null, null, null, null, null, position, similarity, start, "end"
    from semantic_ranking
  )
  group by id
),

-- 8. newest first ------------------------------------------------------------------------------
newest_candidates as materialized (
  -- words as a filter (or several filters ANDed): the documents they match, and the
  -- sessions with a message holding every word
  select rowid as id from documents_fts
  where documents_fts match (select newest_matches from fts_expressions)
  union
  select id from every_word_matches where (select ranking from plan) = 'newest'
),
newest_matches as materialized (
  -- those matches, newest first: the documents read newest first by the timestamp index,
  -- each looked up among the matches, until the list is full (CROSS JOIN keeps that order)
  select d.id, d.timestamp
  from documents d
  cross join newest_candidates c on c.id = d.id
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
newest_of_all as materialized (
  -- no words and no filters: the whole archive, newest first, by the timestamp index
  -- (LIMIT 0 otherwise: a constant WHERE would not stop the index walk)
  select id, timestamp
  from documents
  order by timestamp desc, id desc
  limit (select case when ranking = 'newest' and everything then depth else 0 end from plan, fts_expressions)
),

-- 9. ranked ------------------------------------------------------------------------------------
ranked as materialized (
  -- the chosen ranking's documents in order: (id, score, position), the message its words
  -- were found in, whether they were found by their words (their excerpt is then a
  -- highlighted snippet), the passage found by meaning, how many documents match beyond
  -- those ranked (total, the same on every row), and how each matched: 'all' the words,
  -- 'some' of them, or only by 'meaning' (null: no words). Each ranking is read once here;
  -- the keyword ranking as it is, the others (scored: not even read for keyword) side by side.
  select id, -rank as score, position, message_id, 1 as by_words, null as start, null as "end", total,
    case tier when 0 then 'all' else 'some' end as matched, all_words, some_words
  from keyword_ranking
  where (select ranking from plan) = 'keyword'
  union all
  select id,
    case plan.ranking when 'semantic' then similarity else rrf end,
    case plan.ranking when 'semantic' then semantic_position else row_number() over (order by rrf desc, id) end,
    message_id, keyword_position is not null, start, "end",
    case plan.ranking
      when 'semantic' then count(semantic_position) over ()
      -- hybrid: the keyword total, and the documents found only by meaning
      else coalesce(max(keyword_total) over (), 0) + count(*) filter (where tier is null) over ()
    end,
    case when plan.ranking = 'semantic' or tier is null then 'meaning' when tier = 0 then 'all' else 'some' end,
    all_words, some_words
  from (
    -- hybrid: a document found by meaning may hold the words below the keyword ranking's depth
    select *, case
      when keyword_tier is not null then keyword_tier
      when (select ranking from plan) != 'hybrid' then null
      when id in (select id from every_word_matches) then 0
      when id in (select id from some_word_matches) then 1
    end as tier
    from scored
  ), plan
  where plan.ranking = 'hybrid' or plan.ranking = 'semantic' and semantic_position is not null
  union all
  select id, similarity, position, null, 0, null, null, count(*) over (), null, null, null
  from similar_ranking
  where (select ranking from plan) = 'similar'
  union all
  select id, null, row_number() over (order by timestamp desc, id desc),
    -- a session with a message holding every word: that message
    (select e.message_id from every_word_matches e where e.id = newest_matches.id),
    (select newest_matches from fts_expressions) != '""', null, null,
    -- fewer matches than were listed: the list is all of them
    case when count(*) over () < (select depth from plan) then count(*) over () else (
      select count(*) from newest_candidates where id not in (select id from cut_by_time)
    ) end,
    case when (select query from plan) != '' then 'all' end, null, null
  from newest_matches
  union all
  select id, null, row_number() over (order by time_key desc), null, 0, null, null,
    case when count(*) over () < (select depth from plan) then count(*) over () else (
      select count(*) from filters_by_time
      where filters_by_time match (select newest_by_time from fts_expressions)
        and rowid % 67108864 not in (select id from cut_by_time)
    ) end,
    null, null, null
  from newest_by_time
  union all
  select id, null, row_number() over (order by timestamp desc, id desc), null, 0, null, null,
    (select count(*) from documents), null, null, null
  from newest_of_all
),
ordered as materialized (
  -- the ranked documents in the order asked for (sort): the ranking's own (relevance), newest
  -- or oldest first, or the sessions that used the most tokens or cost the most first (their
  -- usage_hours summed); what has no date, tokens or cost last, ties in the ranking's order
  -- (sorted by tokens or cost, each result carries both, to be shown)
  select id, score, message_id, by_words, start, "end", total, matched, all_words, some_words, tokens, cost,
    case when sorted then row_number() over (order by key is null, key, position) else position end as position
  from (
    select u.*, case u.sort
      when 'newest' then -u.timestamp
      when 'oldest' then u.timestamp
      when 'tokens' then -u.tokens
      when 'cost' then -u.cost
    end as key
    from (
      select r.*, plan.sorted, plan.sort, d.timestamp,
        case when plan.sort in ('tokens', 'cost') then (
          select sum(input_tokens + output_tokens + cache_write_tokens + cache_read_tokens)
          from usage_hours where document_id = r.id
        ) end as tokens,
        case when plan.sort in ('tokens', 'cost') then
          (select round(sum(price), 6) from usage_hours where document_id = r.id) end as cost
      from ranked r
      cross join plan
      left join documents d on plan.sort in ('newest', 'oldest') and d.id = r.id
    ) u
  )
),

-- 10. listed: the page and the facets' documents, read once ------------------------------------
listed as (
  select
    coalesce(max(r.total), 0) as total,
    -- how the results matched: every word, some, or only by meaning (null: no words)
    count(*) filter (where r.matched = 'meaning') as meaning,
    coalesce(max(r.all_words), 0) as all_words,
    -- (null where they were not counted; none ranked by words: none)
    coalesce(max(r.some_words), case when max(r.all_words) is null then 0 end) as some_words,
    -- the page's results, in order: brief (what a list shows, a short snippet and the id that
    -- fetches the rest) or full (every field, a longer excerpt, the matching message)
    '[' || coalesce(group_concat(
      case plan.output when 'brief' then json_patch('{}', json_object(
        'id', d.id,
        'kind', d.kind,
        'type', d.type,
        -- what a seed's results carry under its own names: every result's entity_type and
        -- entity_id (seed 004's result model: a record's entity type and tracker id, else its
        -- type and id), a memory's tags (seed 002 filters and shows memories by them; its
        -- memory_type is type, and its created_at the day in date)
        -- include: response.result_ids
        'tags', case when d.kind = 'memory' and d.tags != '[]' then json(d.tags) end,
        -- a conversation's agent: an agent log's kind, or workspace for the workspace's own
        'agent', case when d.kind = 'conversation' then
          coalesce(case when d.source like 'log:%' then d.extra ->> 'agent' end, 'workspace') end,
        'title', coalesce(d.title, d.path),
        'date', d.date,
        'score', round(r.score, 3),
        'rank', r.position,
        -- only some of the words, or only the meaning (every word, what a hit means, is left out)
        'matched', nullif(r.matched, 'all'),
        -- sorted by tokens or cost: the session's tokens and cost (at the price data's prices)
        'tokens', r.tokens,
        'cost', r.cost,
        -- the message its words were found in (get_conversation's offset), and its snippet
        'message', m.seq,
        -- a line of text (200 characters at most; about 50 from the text, a width that keeps ten
        -- results within 2.5 KB with the fields above): around the words of the query in the
        -- message or the document (FTS5's snippet where the words are there only as the
        -- stemmer finds them), else the passage found by meaning, else the start; left out
        -- where the title already says it all (a memory's title is its text's first line, a
        -- note's its heading), as a list pays for every repeated word
        'snippet', (
          select case when instr(lower(coalesce(d.title, d.path)), lower(trim(line, '.# '))) = 0 then line end
          from (select archivist_preview(coalesce(
            case when m.id is not null then
              coalesce(
                archivist_around(cast(m.text as blob), plan.query, 50),
                -- (found by a command or a file of its calls: the line that names it)
                archivist_around(cast(archivist_searched(m.text, m.tool_calls) as blob), plan.query, 50),
                archivist_excerpt(m.text, '', 50)
              ) end,
            case when r.by_words then coalesce(archivist_around(cast(d.body as blob), plan.query, 50), (
              select snippet(documents_fts, 1, '', '', '...', 10)
              from documents_fts
              where documents_fts match (select highlight from fts_expressions) and rowid = d.id
            )) end,
            case when r.start is not null then
              archivist_excerpt(substr(d.body, r.start + 1, r."end" - r.start), '', 50) end,
            archivist_excerpt(d.body, '', 50)
          ), 200) as line)
        )
      ))
      else json_patch(json_patch(json_object(
        'kind', d.kind,
        -- include: response.result_ids
        'id', d.id,
        'title', d.title,
        'score', round(r.score, 6),
        'rank', r.position,
        'matched', r.matched,
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
          case when r.start is not null then archivist_excerpt(
            substr(d.body, r.start + 1, r."end" - r.start), '', case plan.mode when 'scan' then 80 else 200 end
          ) end,
          archivist_excerpt(d.body, '', case plan.mode when 'scan' then 80 else 200 end)
        ),
        -- a conversation read from an agent log: the message that matches best, and its link
        'message', case when m.id is not null then json_object(
          'index', m.seq, 'role', m.role, 'timestamp', m.timestamp,
          'snippet', archivist_snippet(archivist_searched(m.text, m.tool_calls), plan.query, 24),
          'link', '/document/' || d.id || '?m=' || m.seq || '#m' || m.seq
        ) end
      ), case when plan.sort in ('tokens', 'cost') then json_object('tokens', r.tokens, 'cost', r.cost) else '{}' end),
        -- a conversation synced from another machine (archivist sync): its host
        case when d.source like 'log:%' and d.extra ->> 'host' is not null
          then json_object('host', d.extra ->> 'host') else '{}' end)
      end,
      ',' order by r.position
    ) filter (where r.position > (plan.page - 1) * plan.page_size and r.position <= plan.page * plan.page_size), '') || ']' as items,
    -- the facets (filters.FACETS): counts over the first 200 ranked documents (full output
    -- only), each facet's values most first (months and days newest first), 50 at most per
    -- facet but for those that list every value
    archivist_facets(
      -- include: filters.facet_values
    ) filter (where plan.output = 'full' and r.position <= 200) as facets
  from plan
  cross join ordered r
  -- the documents of the page (and of the facets), by id
  left join documents d on d.id = r.id and (
    r.position > (plan.page - 1) * plan.page_size and r.position <= plan.page * plan.page_size
    or plan.output = 'full' and r.position <= 200
  )
  -- the page's agent-log conversations: the message that their words were found in, else
  -- (found by their title and opening prompt, their meaning, newest first) the first of their
  -- messages with every word, else with some: where the words are, found by the session's
  -- range of message ids alone (ranking its messages would count each word's messages in the
  -- whole archive again, once per result); looked for on the page only (the key is null elsewhere)
  left join messages m on m.id = case
    when r.position > (plan.page - 1) * plan.page_size and r.position <= plan.page * plan.page_size
      and d.kind = 'conversation' and d.source like 'log:%'
    then coalesce(r.message_id, (
      select rowid from message_index
      where r.message_id is null
        and message_index match (select case when r.by_words then message_every else '""' end from fts_expressions)
        and rowid between d.id * 1048576 and d.id * 1048576 + 1048575
      order by rowid
      limit 1
    ), (
      select rowid from message_index
      where r.message_id is null
        and message_index match (select case when r.by_words then message_best else '""' end from fts_expressions)
        and rowid between d.id * 1048576 and d.id * 1048576 + 1048575
      order by rowid
      limit 1
    ))
  end
),
summed as (
  -- listed, and its total split by how the results matched: keyword and hybrid rankings count every word
  -- and some words (null: not counted, as not listed, where 100 or more hold every word), and
  -- hybrid the documents found only by meaning; newest first with words lists only documents
  -- with every word, semantic only by meaning; no words, or a similar list: null
  select listed.*, case
    when plan.query = '' or plan.ranking = 'similar' then null
    when plan.ranking = 'semantic' then json_object('meaning', listed.total)
    when plan.ranking = 'newest' then json_object('all', listed.total)
    when plan.ranking = 'keyword' then json_object('all', listed.all_words, 'some', listed.some_words)
    else json_object('all', listed.all_words, 'some', listed.some_words, 'meaning', listed.meaning)
  end as matched,
  -- an index run still storing agent logs: what was stored so far is what is found (archive.building)
  (select archivist_building(value) from archive_building) as building
  from plan, listed
)

-- 11. the response -----------------------------------------------------------------------------
select case plan.output
  -- the fields of each answer (archivist/queries/response.py); brief: what is null left out, and so
  -- are the counts that are nought and the default sort: a brief answer spends no bytes on what is
  -- not there
  when 'brief' then json_patch('{}', json_object(
    -- include: response.brief
  ))
  else json_object(
    -- include: response.full
  )
end as response
from plan, summed listed  -- (listed is read once, through summed)
