-- The active legal holds and the deletion requests of one tenant: the
-- scopes a call can fall in. lifecycle's scopeCols.covers matches them to calls
-- as the call_lifecycle view does; a test keeps the two in step.
SELECT 'hold' AS kind, hold_id AS id, end_user_ref, trace_id, from_time, to_time
FROM active_legal_holds
WHERE tenant = {tenant:String}
UNION ALL
SELECT 'deletion' AS kind, job_id AS id, end_user_ref, trace_id, from_time, to_time
FROM deletion_scopes
WHERE tenant = {tenant:String}
SETTINGS date_time_output_format = 'iso'
