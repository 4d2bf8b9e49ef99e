with target as (
  -- include: _document_id.sql
),
vector as (
  select e.embedding from embeddings e
  join collections c on c.id = e.collection_id
  where c.name = 'archivist_documents' and e.id = cast((select id from target) as text)
),
nearest as (
  select n.value ->> 0 as id, n.value ->> 1 as similarity
  from json_each(archivist_nearest(
    (select embedding from vector), 'archivist_documents', archivist_limit(:limit, 10, 100) + 1
  )) n
)
select d.id, d.title, d.kind, d.type, d.date, d.path, round(nearest.similarity, 4) as score
from nearest
join documents d on d.id = cast(nearest.id as integer)
where d.id != (select id from target)
order by nearest.similarity desc
limit archivist_limit(:limit, 10, 100)
