with target as (
  -- include: _document_id.sql
)
select d.id, d.kind, d.type, d.title, d.path, d.name, d.line, d.external_id,
  d.product_id,
  (
    select p.title from documents p
    where p.kind = 'record' and p.type = 'product' and p.external_id = cast(d.product_id as text)
    limit 1
  ) as product,
  d.date, d.date_precision, d.month, d.day, d.created_at, d.tags, d.extra,
  root.path || '/' || d.path as file,
  archivist_report_link(
    case d.kind when 'report' then d.type end, d.name, root.path || '/' || d.path
  ) as link,
  exists (
    select 1 from embeddings e join collections c on c.id = e.collection_id
    where c.name = 'archivist_documents' and e.id = cast(d.id as text)
  ) as embedded,
  d.body
-- the workspace's place is recorded when a run ends: until a first one has (an index still
-- reading agent logs, or one that stopped), file is null and the document is still found
from documents d left join workspace_root root
where d.id = (select id from target)
