-- The replay results of one trace in one tenant, or of every tenant when
-- tenant is ''.
SELECT *
FROM replay_results
WHERE trace_id = {trace_id:String}
  AND ({tenant:String} = '' OR tenant = {tenant:String})
ORDER BY at, run_id, span_id
SETTINGS date_time_output_format = 'iso'
