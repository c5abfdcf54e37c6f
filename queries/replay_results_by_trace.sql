SELECT *
FROM replay_results
WHERE trace_id = {trace_id:String}
ORDER BY at, run_id, span_id
SETTINGS date_time_output_format = 'iso'
