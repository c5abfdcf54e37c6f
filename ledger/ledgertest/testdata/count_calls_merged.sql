-- The statistics query as it was before it read the kept rows: it merges
-- every call of the ledger again (provider_calls). Kept as the reference
-- the kept-row query (queries/count_calls.sql) must agree with.
-- calls: provider calls as every reader sees them (deduplicated, the spans
-- of one call merged); distinct_calls: their keys; spans: deduplicated call
-- spans; stored_rows: physical rows, which exceed spans until background
-- merges collapse redelivered batches; conflicts: row versions received
-- under a known key with other content and not applied (row_conflicts, 0007).
SELECT
    count() AS calls,
    uniqExact(tenant, trace_id, span_id) AS distinct_calls,
    (SELECT count() FROM llm_calls FINAL) AS spans,
    (SELECT count() FROM llm_calls) AS stored_rows,
    (SELECT count() FROM row_conflicts(trace_id = '', tenant = '', from = '1900-01-01 00:00:00', to = '2262-01-01 00:00:00')) AS conflicts
FROM provider_calls(tenant = '', traces = '', from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59')
