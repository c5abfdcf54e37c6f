-- The content references of a trace's log records, by the span whose
-- context they carry (migration 0010).
SELECT *
FROM log_content_refs FINAL
WHERE tenant = {tenant:String} AND trace_id = {trace_id:String}
ORDER BY span_id, ref
SETTINGS date_time_output_format = 'iso'
