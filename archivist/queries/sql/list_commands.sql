select type as command_name, count(*) as reports, max(day) as latest_date
from documents
where kind = 'report'
group by type
order by type
