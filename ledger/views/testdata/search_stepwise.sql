-- views_search.sql as it was until the search read every reading in one
-- statement: one reading per statement, run in Search's order until one
-- finds calls. The tests compare the two over varied ledgers.
-- The complaint search: the calls (one per provider call) of the traces
-- holding a match for one of trace_id, response_id and end_user_ref (the
-- others ''), newest first. The traces are found in llm_calls (each field
-- has a bloom filter index); for an end user only the traces of their
-- newest spans in range, as many as the page holds (ranked by each trace's
-- latest matching span, which starts no earlier than its call): a frequent
-- user has thousands of traces. Their calls are read as kept for them
-- (migration 0012), each trace's newest rewrite, by primary key.
SELECT
    tenant, trace_id, span_id, service_name, start_time, duration_ms, operation,
    provider, request_model, response_model, response_id, status, error_class,
    input_tokens, output_tokens, toString(cost_usd) AS cost_usd, cost_status, end_user_ref
FROM
(
    SELECT *, max(version) OVER (PARTITION BY tenant, trace_id) AS newest
    FROM provider_call_rows FINAL
    WHERE trace_id IN
    (
        SELECT {trace_id:String} WHERE {trace_id:String} != ''
        UNION ALL
        SELECT DISTINCT trace_id FROM llm_calls
        WHERE {response_id:String} != '' AND response_id = {response_id:String}
        UNION ALL
        SELECT trace_id FROM
        (
            SELECT trace_id FROM llm_calls
            WHERE {end_user_ref:String} != '' AND end_user_ref = {end_user_ref:String} AND {filter}
            GROUP BY trace_id ORDER BY max(start_time) DESC, trace_id DESC LIMIT {limit:UInt32}
        )
    )
)
WHERE version = newest AND NOT is_deleted
  AND {filter}
  AND ({trace_id:String} = '' OR trace_id = {trace_id:String})
  AND ({response_id:String} = '' OR response_id = {response_id:String})
  AND ({end_user_ref:String} = '' OR end_user_ref = {end_user_ref:String})
ORDER BY start_time DESC, tenant DESC, trace_id DESC, span_id DESC
LIMIT {limit:UInt32}
