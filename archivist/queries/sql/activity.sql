-- one branch per granularity, each a scan of a covering (kind, month|day) index
select month as period, kind, count(*) as documents
from documents
where :by != 'day' and month is not null and (:kind = '' or kind = :kind)
group by kind, month
union all
select day, kind, count(*)
from documents
where :by = 'day' and day is not null and (:kind = '' or kind = :kind)
group by kind, day
order by period, kind
