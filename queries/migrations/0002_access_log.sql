-- Every reveal of content, every denied attempt and every export: who, when,
-- with which role, why, on what, and what happened. Append-only.
-- cluster: shard by rand()
CREATE TABLE IF NOT EXISTS access_log
(
    event_id  String,
    at        DateTime64(3, 'UTC'),
    actor     String,
    role      LowCardinality(String),
    action    LowCardinality(String),
    tenant    LowCardinality(String),
    trace_id  String,
    ref       String,
    reason    String,
    outcome   LowCardinality(String),
    detail    LowCardinality(String)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(at)
ORDER BY (tenant, at, event_id);
