-- Ledger rows of an audit export: one tenant ('' for all) and a [from, to)
-- range of call start times, one row per provider call (provider_calls), in
-- a total order (the row's span key is unique). cost_usd is its exact
-- decimal text.
SELECT * REPLACE (toString(cost_usd) AS cost_usd)
FROM provider_calls(tenant = {tenant:String}, traces = '', from = {from:DateTime64}, to = {to:DateTime64})
ORDER BY tenant, start_time, trace_id, span_id
