-- Shared fragment: the time range of the activity queries, in Unix seconds (start_at, end_at), and
-- the newest day with a message in the archive (newest_day; null in an empty one). An end_date not
-- given is that newest day (else today), a start_date not given the day 30 days before the end's:
-- the view opens on data, not on an empty month. A query includes it as a CTE's body.
select newest_day,
  coalesce(
    archivist_time(nullif(trim(:start_date), ''), 0),
    archivist_time(date(end_at, 'unixepoch', '-30 days'), 0)
  ) as start_at,
  end_at
from (
  select newest_day, archivist_time(coalesce(nullif(trim(:end_date), ''), newest_day, 'today'), 1) as end_at
  from (select substr(max(hour), 1, 10) as newest_day from message_hours)
)
