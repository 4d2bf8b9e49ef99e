select kind, type, count(*) as documents
from documents
group by kind, type
order by kind, documents desc, type
