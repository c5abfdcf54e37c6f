SELECT *
FROM evidence_spans FINAL
WHERE trace_id = {trace_id:String}
ORDER BY start_time, span_id
SETTINGS date_time_output_format = 'iso'
