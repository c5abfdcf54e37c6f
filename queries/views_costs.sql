-- Cost and usage per day (UTC), model (the response model, else the
-- requested one) or tenant, and their total (the ROLLUP row, is_total = 1).
-- Sums are exact: Decimal(18, 12) sums to Decimal(38, 12), written as its
-- decimal text. A sum over only NULLs is NULL, so unknown stays unknown; the
-- unknown calls are counted so a partial sum can be marked.
-- c.cost_usd names the column, not the result alias of the same name.
SELECT
    multiIf({group:String} = 'day', toString(toDate(start_time)),
            {group:String} = 'model', if(response_model != '', response_model, request_model),
            toString(tenant)) AS key,
    grouping(key) AS is_total,
    count() AS calls,
    toString(sum(c.cost_usd)) AS cost_usd,
    countIf(c.cost_usd IS NULL) AS cost_unknown_calls,
    sum(input_tokens) AS input_tokens,
    sum(output_tokens) AS output_tokens
FROM kept_calls(from = {from:DateTime64}, to = {to:DateTime64}) AS c
WHERE {filter}
GROUP BY ROLLUP(key)
ORDER BY is_total, key
LIMIT {limit:UInt32}
