-- The provider calls of a trace, one row per call however many spans
-- describe it: provider_calls' rows as kept for the trace (migration 0012),
-- its newest rewrite.
SELECT * EXCEPT (version, is_deleted, newest) REPLACE (toString(cost_usd) AS cost_usd)
FROM
(
    SELECT *, max(version) OVER (PARTITION BY tenant) AS newest
    FROM provider_call_rows FINAL
    WHERE trace_id = {trace_id:String}
)
WHERE version = newest AND NOT is_deleted
ORDER BY start_time, span_id
SETTINGS date_time_output_format = 'iso'
