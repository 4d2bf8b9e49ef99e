-- Shared fragment: the id of the document that :document names: its id, its path, or the path
-- of a file that belongs to it (the index's files table: a file of a conversation's folder
-- names the conversation), each path relative to the workspace or absolute inside it. A path
-- is compared whole with the paths the index recorded, never resolved on disk, so that '..',
-- a NUL or a path outside the workspace names nothing. Every lookup is on an index (the
-- documents' key, documents_path, the files' key and documents_source). A query includes it
-- as a CTE's body.
with named as (
  -- :document relative to the workspace: an absolute path inside it, without the workspace's
  select coalesce((
    select substr(:document, length(root.path) + 2) from workspace_root root
    where substr(:document, 1, length(root.path) + 1) = root.path || '/'
  ), :document) as path
)
select id from documents where id = cast(:document as integer) and cast(id as text) = trim(:document)
union all
select d.id from named join documents d on d.path = named.path
union all
-- the document its file was read into (a file of many records or memories: the first of them)
select d.id from named join files f on f.path = named.path join documents d on d.source = f.source
order by 1
limit 1
