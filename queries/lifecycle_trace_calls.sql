-- The calls of a set of traces of one tenant (newline-separated trace IDs),
-- with what scopes match them on.
SELECT trace_id, end_user_ref, start_time
FROM llm_calls FINAL
WHERE tenant = {tenant:String}
  AND trace_id IN (SELECT arrayJoin(splitByChar('\n', {traces:String})))
SETTINGS date_time_output_format = 'iso'
