-- The calls of a set of traces of one tenant (newline-separated trace IDs),
-- with what scopes match them on.
SELECT trace_id, end_user_ref, start_time
FROM provider_calls(tenant = {tenant:String}, traces = {traces:String}, from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59')
SETTINGS date_time_output_format = 'iso'
