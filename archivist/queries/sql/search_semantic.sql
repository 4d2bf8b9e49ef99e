with q as materialized (
  select archivist_embed(:query) as vector
),
filtered as (
  -- one indexed lookup per filter (each branch runs only when its filter is set)
  select id from documents where length(:date_range) = 7 and month = :date_range
  union all
  select id from documents where length(:date_range) = 10 and day = :date_range
  union all
  select id from documents
  where :date_range = '' and :conversation_type != '' and type = :conversation_type
),
allowed as materialized (
  -- filters pick the chunks to search; no filter searches them all
  select case when :conversation_type = '' and :date_range = '' then null else (
    select json_group_array(c.id)
    from filtered f
    join documents d on d.id = f.id
    join chunks c on c.document_id = d.id
    where :conversation_type = '' or d.type = :conversation_type
  ) end as ids
),
nearest as (
  select n.value ->> 0 as chunk_id, n.value ->> 1 as similarity
  from json_each(
    archivist_nearest((select vector from q), 'archivist_chunks', 200, (select ids from allowed))
  ) n
),
best as (
  select c.document_id, c.start, c."end", nearest.similarity,
    row_number() over (partition by c.document_id order by nearest.similarity desc) as n
  from nearest
  join chunks c on c.id = nearest.chunk_id
)
select
  d.id,
  d.title as conversation,
  d.kind,
  d.type,
  d.date,
  d.path as source_path,
  round(b.similarity, 4) as score,
  -- an agent-log conversation's text is its messages (document_texts)
  substr((select t.body from document_texts t where t.id = d.id), b.start + 1, b."end" - b.start) as text
from best b
join documents d on d.id = b.document_id
where b.n = 1
  and b.similarity >= archivist_similarity_floor()
order by b.similarity desc
limit archivist_limit(:limit, 10, 100)
