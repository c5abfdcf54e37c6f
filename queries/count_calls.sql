-- calls: rows as every reader sees them (deduplicated); distinct_calls: keys;
-- stored_rows: physical rows, which exceed calls until background merges
-- collapse redelivered batches; conflicts: row versions received under a
-- known key with other content and not applied (row_conflicts, 0007).
SELECT
    count() AS calls,
    uniqExact(tenant, trace_id, span_id) AS distinct_calls,
    (SELECT count() FROM llm_calls) AS stored_rows,
    (SELECT count() FROM row_conflicts(trace_id = '', tenant = '', from = '1900-01-01 00:00:00', to = '2262-01-01 00:00:00')) AS conflicts
FROM llm_calls FINAL
