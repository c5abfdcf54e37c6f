-- Ledger rows of an audit export: one tenant ('' for all) and a [from, to)
-- range of call start times, deduplicated, in a total order (the span key
-- is unique after FINAL). cost_usd is its exact decimal text.
SELECT * REPLACE (toString(cost_usd) AS cost_usd)
FROM llm_calls FINAL
WHERE ({tenant:String} = '' OR tenant = {tenant:String})
  AND start_time >= {from:DateTime64}
  AND start_time < {to:DateTime64}
ORDER BY tenant, start_time, trace_id, span_id
