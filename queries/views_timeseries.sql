-- Calls, errors and cost per time bucket (hour or day, aligned to UTC), in
-- time order. Errors are calls whose span status is error: instrumentations
-- leave the status unset on success, so "not ok" would count those too.
-- c.cost_usd names the column, not the result alias of the same name.
SELECT
    toStartOfInterval(start_time, toIntervalSecond({bucket_seconds:UInt32})) AS t,
    count() AS calls,
    countIf(status = 'error') AS errors,
    toString(sum(c.cost_usd)) AS cost_usd,
    countIf(c.cost_usd IS NULL) AS cost_unknown_calls
FROM kept_calls(from = {from:DateTime64}, to = {to:DateTime64}) AS c
WHERE {filter}
GROUP BY t
ORDER BY t
LIMIT {limit:UInt32}
