-- The provider calls of a trace, one row per call however many spans
-- describe it: provider_calls' rows as kept for the trace (migration 0012),
-- with their rewrite's version and tombstone flag. The reader keeps each
-- tenant's newest rewrite (Store.CallsByTrace): a window over the rows here
-- cost a third more than the read itself (bench/lookup).
SELECT * REPLACE (toString(cost_usd) AS cost_usd)
FROM provider_call_rows FINAL
WHERE trace_id = {trace_id:String}
ORDER BY start_time, span_id
SETTINGS date_time_output_format = 'iso'
