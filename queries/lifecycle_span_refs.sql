-- Which of a batch of objects of one tenant (newline-separated refs) spans
-- that are not calls reference, or log records carrying a span's context
-- (migration 0010), with the trace and start. The list is in the query
-- once (page): query text is bounded (refLists).
WITH splitByChar('\n', {refs:String}) AS page
SELECT ref, trace_id, start_time
FROM evidence_spans FINAL
ARRAY JOIN content_refs AS ref
WHERE tenant = {tenant:String} AND hasAny(content_refs, page) AND has(page, ref)
UNION ALL
SELECT ref, trace_id, time AS start_time
FROM log_content_refs FINAL
WHERE tenant = {tenant:String} AND has(page, ref)
SETTINGS date_time_output_format = 'iso'
