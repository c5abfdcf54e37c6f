-- One row per call replayed by a distribution replay run, linked to the
-- original call by (tenant, trace_id, span_id). report holds the metadata of
-- the result (counts, rates, divergence positions, parameter changes) and no
-- output text: this table is readable without the reveal checks. Append-only.
-- cluster: shard by cityHash64(tenant, trace_id)
CREATE TABLE IF NOT EXISTS replay_results
(
    run_id         String,
    at             DateTime64(3, 'UTC'),
    actor          String,
    purpose        String,
    tenant         LowCardinality(String),
    trace_id       String,
    span_id        String,
    provider       LowCardinality(String),
    response_model String,
    status         LowCardinality(String),
    requested      UInt32,
    completed      UInt32,
    exact_matches  Nullable(UInt32),
    report         String
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(at)
ORDER BY (tenant, trace_id, span_id, at, run_id);
