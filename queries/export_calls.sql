SELECT * REPLACE (toString(cost_usd) AS cost_usd)
FROM llm_calls FINAL
ORDER BY tenant, start_time, trace_id, span_id
SETTINGS date_time_output_format = 'iso'
