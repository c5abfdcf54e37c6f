-- calls: provider calls as every reader sees them, read from the kept rows
-- (provider_call_rows, 0012) by kept_calls' newest-rewrite rule (0016)
-- instead of merged from every ledger row again, which took 11 s of CPU
-- and 1.8 GB at 1,000,000 calls (deploy/CAPACITY.md); distinct_calls:
-- their keys; spans: deduplicated call spans; stored_rows: physical rows,
-- which exceed spans until background merges collapse redelivered batches;
-- conflicts: row versions received under a known key with other content
-- and not applied, counted as row_conflicts (0007) lists them (every
-- version of a key but its first) without gathering each key's versions
-- in memory. The merged reference is ledger/ledgertest/testdata.
SELECT
    count() AS calls,
    uniqExact(tenant, trace_id, span_id) AS distinct_calls,
    (SELECT count() FROM llm_calls FINAL) AS spans,
    (SELECT count() FROM llm_calls) AS stored_rows,
    (
        SELECT count()
        FROM
        (
            SELECT ingest_order, max(ingest_order) OVER (PARTITION BY tenant, trace_id, span_id, source) AS first
            FROM row_versions FINAL
        )
        WHERE ingest_order != first
    ) AS conflicts
FROM kept_calls(from = '1900-01-01 00:00:00', to = '2262-01-01 00:00:00')
