with vectors as (
  select e.id, e.content_hash, e.updated from embeddings e
  join collections c on c.id = e.collection_id
  where c.name = 'archivist_documents'
)
select
  (select count(*) from chunks) as total_chunks,
  (select count(*) from vectors) as num_documents,
  -- every document, less those embedded as they are now (read from the vectors'
  -- side: counting documents by an index is quick, reading each row is not)
  (select count(*) from documents) - (
    select count(*) from vectors v
    join documents d on d.id = cast(v.id as integer)
    where v.content_hash = unhex(d.content_hash)
  ) as pending,
  (select file from pragma_database_list where name = 'main') as db_path,
  coalesce((select model from collections where name = 'archivist_chunks'), archivist_model()) as model,
  (
    select json_group_array(json_object(
      'document_id', r.document_id, 'path', r.path, 'title', r.title, 'embedded_at', r.embedded_at
    ))
    from (
      select d.id as document_id, d.path, d.title,
        strftime('%Y-%m-%dT%H:%M:%SZ', v.updated, 'unixepoch') as embedded_at
      from vectors v join documents d on d.id = cast(v.id as integer)
      order by v.updated desc, d.id desc
      limit 10
    ) r
  ) as recent_embeddings
