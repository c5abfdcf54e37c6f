-- The conflicts of one trace (row_conflicts, 0007) in one tenant, or of
-- every tenant when tenant is ''.
SELECT * EXCEPT start_time
FROM row_conflicts(trace_id = {trace_id:String}, tenant = {tenant:String}, from = '1900-01-01 00:00:00', to = '2262-01-01 00:00:00')
ORDER BY source, tenant, span_id, received_at, conflicting_hash
SETTINGS date_time_output_format = 'iso'
