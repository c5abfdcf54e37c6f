-- The conflicts of one trace, of every tenant (row_conflicts, 0007).
SELECT * EXCEPT start_time
FROM row_conflicts(trace_id = {trace_id:String}, tenant = '', from = '1900-01-01 00:00:00', to = '2262-01-01 00:00:00')
ORDER BY source, tenant, span_id, received_at, conflicting_hash
SETTINGS date_time_output_format = 'iso'
