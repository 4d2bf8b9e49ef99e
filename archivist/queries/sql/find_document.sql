with target as (
  -- include: _document_id.sql
)
select d.id, d.kind, d.type, d.title, d.path, d.date,
  exists (
    select 1 from embeddings e join collections c on c.id = e.collection_id
    where c.name = 'archivist_documents' and e.id = cast(d.id as text)
  ) as embedded
from documents d
where d.id = (select id from target)
