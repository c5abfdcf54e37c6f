-- calls: rows as every reader sees them (deduplicated); distinct_calls: keys;
-- stored_rows: physical rows, which exceed calls until background merges
-- collapse redelivered batches.
SELECT
    count() AS calls,
    uniqExact(tenant, trace_id, span_id) AS distinct_calls,
    (SELECT count() FROM llm_calls) AS stored_rows
FROM llm_calls FINAL
