-- Call summaries (one per provider call), newest first, for the ledger
-- list. Paging is by keyset: rows after the cursor's (start_time, tenant,
-- trace_id, span_id) in this order, which is total because a call's row key
-- is unique; the separate start_time bound lets the engine skip partitions
-- and parts. (The complaint search, narrowed to a few traces, is
-- views_search.sql.)
SELECT
    tenant, trace_id, span_id, service_name, start_time, duration_ms, operation,
    provider, request_model, response_model, response_id, status, error_class,
    input_tokens, output_tokens, toString(cost_usd) AS cost_usd, cost_status, end_user_ref
FROM kept_calls(
    from = {from:DateTime64},
    -- A later page reads only calls up to the cursor.
    to = if({paged:UInt32} = 0, {to:DateTime64}, least({to:DateTime64}, {before_time:DateTime64} + toIntervalNanosecond(1))))
WHERE {filter}
  AND ({paged:UInt32} = 0 OR (
        start_time <= {before_time:DateTime64}
        AND (start_time, tenant, trace_id, span_id)
            < ({before_time:DateTime64}, {before_tenant:String}, {before_trace_id:String}, {before_span_id:String})))
ORDER BY start_time DESC, tenant DESC, trace_id DESC, span_id DESC
LIMIT {limit:UInt32}
