-- The calls named by (trace_id, span_id), for a replay run; the caller
-- drops those of tenants it is not granted.
SELECT * REPLACE (toString(cost_usd) AS cost_usd)
FROM provider_calls(tenant = '', traces = arrayStringConcat(JSONExtract({traces:String}, 'Array(String)'), '\n'),
    from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59')
WHERE has(JSONExtract({traces:String}, 'Array(String)'), trace_id)
  AND has(JSONExtract({keys:String}, 'Array(String)'), concat(trace_id, ':', span_id))
ORDER BY start_time, span_id
SETTINGS date_time_output_format = 'iso'
