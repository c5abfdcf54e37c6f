-- The complaint search, every reading of q at once: the calls (one per
-- provider call) of the traces holding a match for q as a trace ID
-- (trace_id: q lowercased when shaped like one, else ''), as a provider
-- response ID, or as an end-user reference among calls that started in
-- [user_from, user_to). reading numbers the reading that finds each call
-- in Search's order (0 trace ID, 1 response ID, 2 end user; the first if
-- several do), and rows sort by it first, so the page begins with the
-- first reading that found anything and Search keeps those rows. One
-- statement, not one per reading: a reading that found nothing still cost
-- a statement's planning and a read of the kept calls, a fifth of an
-- end-user search's time at 1M calls (bench/lookup).
--
-- The traces are found in llm_calls (a bloom filter index on response_id;
-- for an end user the projection of migration 0013): for an end user only
-- the traces of their newest spans in range, as many as the page holds
-- (ranked by each trace's latest matching span, which starts no earlier
-- than its call): a frequent user has thousands of traces. Their calls are
-- read as kept for them (migration 0012), each trace's newest rewrite, by
-- primary key: the readings name each trace with the tenants of its
-- matching spans (a call's row has its spans' tenant), so the key
-- (tenant, trace_id) narrows the read to the traces' granules. By trace_id
-- alone it left the bloom filter 1,522 of 3,907 granules for a frequent
-- user's 50 traces at 1M calls, most of an end-user search's time
-- (bench/lookup).
WITH
    response_traces AS
    (
        SELECT tenant, trace_id FROM llm_calls WHERE response_id = {q:String}
    ),
    user_traces AS
    (
        SELECT arrayJoin(user_tenants), trace_id FROM
        (
            SELECT trace_id, groupUniqArray(tenant) AS user_tenants FROM llm_calls
            WHERE end_user_ref = {q:String} AND start_time >= {user_from:DateTime64} AND start_time < {user_to:DateTime64} AND {filter}
            GROUP BY trace_id ORDER BY max(start_time) DESC, trace_id DESC LIMIT {limit:UInt32}
        )
    )
SELECT
    tenant, trace_id, span_id, service_name, start_time, duration_ms, operation,
    provider, request_model, response_model, response_id, status, error_class,
    input_tokens, output_tokens, toString(cost_usd) AS cost_usd, cost_status, end_user_ref, reading
FROM
(
    SELECT *, max(version) OVER (PARTITION BY tenant, trace_id) AS newest,
        multiIf(
            {trace_id:String} != '' AND trace_id = {trace_id:String}, 0,
            response_id = {q:String} AND (tenant, trace_id) IN response_traces, 1,
            end_user_ref = {q:String} AND start_time >= {user_from:DateTime64} AND start_time < {user_to:DateTime64}
                AND (tenant, trace_id) IN user_traces, 2,
            3) AS reading
    FROM provider_call_rows FINAL
    WHERE ({trace_id:String} != '' AND trace_id = {trace_id:String}) OR (tenant, trace_id) IN response_traces OR (tenant, trace_id) IN user_traces
)
WHERE version = newest AND NOT is_deleted AND reading < 3
  AND {filter}
ORDER BY reading, start_time DESC, tenant DESC, trace_id DESC, span_id DESC
LIMIT {limit:UInt32}
