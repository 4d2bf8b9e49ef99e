-- Shared fragment: the id of the document that :document names, by its id, its path in the
-- workspace or its absolute path (each an indexed lookup). A query includes it as a CTE's body.
select id from documents where id = cast(:document as integer) and cast(id as text) = trim(:document)
union all
select id from documents where path = :document
union all
select d.id from documents d, workspace_root root
where d.path = substr(:document, length(root.path) + 2) and root.path || '/' || d.path = :document
order by 1
limit 1
