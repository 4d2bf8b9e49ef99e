select exists (
  select 1 from documents_fts
  where documents_fts match '{title body} : (' || archivist_fts(:query, 'raw') || ')'
) as matches
