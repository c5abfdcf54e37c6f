-- Which of a batch of objects of one tenant (newline-separated refs) spans
-- that are not calls reference, with the span's trace and start.
WITH splitByChar('\n', {refs:String}) AS page
SELECT ref, trace_id, start_time
FROM evidence_spans FINAL
ARRAY JOIN content_refs AS ref
WHERE tenant = {tenant:String} AND hasAny(content_refs, page) AND has(page, ref)
SETTINGS date_time_output_format = 'iso'
