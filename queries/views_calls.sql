-- Call summaries (one per provider call), newest first, for the ledger list
-- and the complaint search. The search binds one of trace_id, response_id
-- and end_user_ref ('' = not narrowed; each has a bloom filter index): the
-- traces holding a match are found first, and their calls merged; for an
-- end user only the traces of their newest spans in range, as many as the
-- page holds (ranked by each trace's latest matching span, which starts no
-- earlier than its call): a frequent user has thousands of traces, and
-- merging them all cost twice the page's budget (bench/lookup). Paging is
-- by keyset: rows after the cursor's (start_time, tenant, trace_id,
-- span_id) in this order, which is total because a call's row key is
-- unique; the separate start_time bound lets the engine skip partitions and
-- parts.
SELECT
    tenant, trace_id, span_id, service_name, start_time, duration_ms, operation,
    provider, request_model, response_model, response_id, status, error_class,
    input_tokens, output_tokens, toString(cost_usd) AS cost_usd, cost_status, end_user_ref
FROM provider_calls(tenant = '', traces = multiIf(
        {trace_id:String} != '', {trace_id:String},
        {response_id:String} != '', (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n')) FROM llm_calls WHERE {response_id:String} != '' AND response_id = {response_id:String}),
        {end_user_ref:String} != '', (SELECT if(empty(groupArray(trace_id)), '-', arrayStringConcat(groupArray(trace_id), '\n')) FROM (
            SELECT trace_id FROM llm_calls
            WHERE {end_user_ref:String} != '' AND end_user_ref = {end_user_ref:String} AND {filter}
            GROUP BY trace_id ORDER BY max(start_time) DESC, trace_id DESC LIMIT {limit:UInt32})),
        ''),
    from = {from:DateTime64},
    -- A later page merges only calls up to the cursor.
    to = if({paged:UInt32} = 0, {to:DateTime64}, least({to:DateTime64}, {before_time:DateTime64} + toIntervalNanosecond(1))))
WHERE {filter}
  AND ({trace_id:String} = '' OR trace_id = {trace_id:String})
  AND ({response_id:String} = '' OR response_id = {response_id:String})
  AND ({end_user_ref:String} = '' OR end_user_ref = {end_user_ref:String})
  AND ({paged:UInt32} = 0 OR (
        start_time <= {before_time:DateTime64}
        AND (start_time, tenant, trace_id, span_id)
            < ({before_time:DateTime64}, {before_tenant:String}, {before_trace_id:String}, {before_span_id:String})))
ORDER BY start_time DESC, tenant DESC, trace_id DESC, span_id DESC
LIMIT {limit:UInt32}
