-- The complaint search, every reading of q at once: the calls (one per
-- provider call) matching q as a trace ID (trace_id: q lowercased when
-- shaped like one, else ''), as a provider response ID, or as an end-user
-- reference among calls that started in [user_from, user_to). reading
-- numbers the reading that finds each call in Search's order (0 trace ID,
-- 1 response ID, 2 end user; a call can come once per reading), and rows
-- sort by it first, so the page begins with the first reading that found
-- anything and Search keeps those rows. One statement, not one per
-- reading: a reading that found nothing still cost a statement's planning
-- and a read of the kept calls (bench/lookup).
--
-- Calls are read as kept for them (migration 0012), each trace's newest
-- rewrite. For a trace ID or response ID, the traces are read whole by
-- primary key: the response ID's traces are found in llm_calls (a bloom
-- filter index on response_id) with the tenants of their matching spans,
-- so the key (tenant, trace_id) narrows the read to their granules. For an
-- end user, the user's kept calls in range are read in the projection of
-- migration 0017, newest first, at most the newest user_bound rows; when
-- the bound cut them, the rows of the oldest start time read are left out:
-- rows that start together are read newest version first, not in the
-- page's order, so the cut may have left out one the page orders before
-- them (LIMIT WITH TIES would keep the group whole, but cost three times as
-- much for a user with 45,000 calls in the window). user_rows in the
-- result says how many were read, so Search reads again without the bound
-- when a page it left short may miss older calls. A projection is not read
-- with FINAL, so each row's newest version is kept here (LIMIT 1 BY), and
-- a trace's newest rewrite is judged among the user's calls read. Until
-- 0017 the search found the user's newest traces in llm_calls and read
-- them by key: a frequent user's 50 traces were 50 scattered reads. Read
-- whole, the window of a user with 45,000 calls took 95-123 ms
-- (bench/lookup).
WITH
    response_traces AS
    (
        SELECT tenant, trace_id FROM llm_calls WHERE response_id = {q:String}
    )
SELECT
    tenant, trace_id, span_id, service_name, start_time, duration_ms, operation,
    provider, request_model, response_model, response_id, status, error_class,
    input_tokens, output_tokens, toString(cost_usd) AS cost_usd, cost_status, end_user_ref, reading, user_rows
FROM
(
    SELECT
        tenant, trace_id, span_id, service_name, start_time, duration_ms, operation,
        provider, request_model, response_model, response_id, status, error_class,
        input_tokens, output_tokens, cost_usd, cost_status, end_user_ref, version, is_deleted,
        0 AS user_rows,
        max(version) OVER (PARTITION BY tenant, trace_id) AS newest,
        if({trace_id:String} != '' AND trace_id = {trace_id:String}, 0, 1) AS reading
    FROM provider_call_rows FINAL
    WHERE ({trace_id:String} != '' AND trace_id = {trace_id:String}) OR (tenant, trace_id) IN response_traces
    UNION ALL
    SELECT *, max(version) OVER (PARTITION BY tenant, trace_id) AS newest, 2 AS reading
    FROM
    (
        SELECT * EXCEPT oldest FROM
        (
            SELECT *, count() OVER () AS user_rows, min(start_time) OVER () AS oldest
            FROM
            (
                -- The projection's columns: a read of any other is not
                -- planned through it.
                SELECT
                    tenant, trace_id, span_id, service_name, start_time, duration_ms, operation,
                    provider, request_model, response_model, response_id, status, error_class,
                    input_tokens, output_tokens, cost_usd, cost_status, end_user_ref, version, is_deleted
                FROM provider_call_rows
                WHERE end_user_ref = {q:String} AND start_time >= {user_from:DateTime64} AND start_time < {user_to:DateTime64}
                ORDER BY start_time DESC, version DESC
                LIMIT {user_bound:UInt32}
            )
        )
        -- Cut at the bound, the group of rows of the oldest start time
        -- read may lack some: it is left out.
        WHERE user_rows < {user_bound:UInt32} OR start_time > oldest
        ORDER BY version DESC
        LIMIT 1 BY tenant, trace_id, span_id
    )
)
WHERE version = newest AND NOT is_deleted
  AND (reading != 1 OR response_id = {q:String})
  AND {filter}
ORDER BY reading, start_time DESC, tenant DESC, trace_id DESC, span_id DESC
LIMIT {limit:UInt32}
