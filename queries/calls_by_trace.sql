-- The provider calls of a trace (provider_calls: one row per call however
-- many spans describe it).
SELECT * REPLACE (toString(cost_usd) AS cost_usd)
FROM provider_calls(tenant = '', traces = {trace_id:String}, from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59')
ORDER BY start_time, span_id
SETTINGS date_time_output_format = 'iso'
