-- Shared fragment: how an answer names a report (d): its id, its file's name, its command,
-- its date (midnight UTC of its day, ISO 8601) and its title. A query includes it as the
-- first columns of its select list.
d.id,
d.name as report_name,
d.type as command_name,
case when d.day is not null then d.day || 'T00:00:00.000Z' end as date,
d.title,
