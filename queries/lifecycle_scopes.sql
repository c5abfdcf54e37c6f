-- The active legal holds and the deletion requests of one tenant: the
-- scopes a call can fall in. lifecycle's scopeCols.covers matches them to calls
-- as the call_lifecycle view does; a test keeps the two in step.
-- The rule of the active_legal_holds and deletion_scopes views (0003), on
-- the tenant's rows only: through the views, which filter by tenant after
-- taking the latest row of every hold, this cost 60% more on empty tables
-- (bench/lookup, the evidence page reads it for every view).
SELECT 'hold' AS kind, hold_id AS id, end_user_ref, trace_id, from_time, to_time
FROM
(
    SELECT hold_id, end_user_ref, trace_id, from_time, to_time, status
    FROM legal_holds
    WHERE tenant = {tenant:String}
    ORDER BY at DESC
    LIMIT 1 BY hold_id
)
WHERE status = 'active'
UNION ALL
SELECT DISTINCT 'deletion' AS kind, job_id AS id, end_user_ref, trace_id, from_time, least(to_time, requested_at) AS to_time
FROM deletion_jobs
WHERE tenant = {tenant:String}
SETTINGS date_time_output_format = 'iso'
