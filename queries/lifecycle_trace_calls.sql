-- The calls of one trace with the holds and deletion requests covering them.
SELECT trace_id, span_id, start_time, refs, hold_ids, deletion_job_ids
FROM call_lifecycle(tenant = {tenant:String})
WHERE trace_id = {trace_id:String}
ORDER BY start_time, span_id
SETTINGS date_time_output_format = 'iso'
