-- Shared fragment: the ids of the reports whose text holds :query (case-insensitive
-- substring), by the trigram index. A query includes it as a CTE's body.
select rowid as id
from reports_trigram
where reports_trigram match archivist_phrase(:query)
union
-- the trigram index cannot look up fewer than three characters
select id
from documents
where kind = 'report' and length(trim(:query)) < 3
  and archivist_count(body, :query) > 0
