-- The calls named by (trace_id, span_id), for a replay run; the caller
-- drops those of tenants it is not granted.
SELECT * REPLACE (toString(cost_usd) AS cost_usd)
FROM llm_calls FINAL
WHERE has(JSONExtract({traces:String}, 'Array(String)'), trace_id)
  AND has(JSONExtract({keys:String}, 'Array(String)'), concat(trace_id, ':', span_id))
ORDER BY start_time, span_id
SETTINGS date_time_output_format = 'iso'
