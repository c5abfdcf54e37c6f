-- Leases: which replica runs a background job (the lifecycle runner), so
-- that replicas sharing one ledger never run the same job twice
-- (ledger/lease). ClickHouse has no transactions; the compare-and-set is
-- the insert deduplication: every change of a lease (taking, renewing,
-- releasing it) is a row for the next term, inserted with the dedup token
-- "<name>:<term>", so of two replicas claiming the same term the engine
-- keeps exactly one row and both read back the same winner. The lease is
-- the row with the highest term; times are the engine's clock, so replicas'
-- clocks do not have to agree.
-- non_replicated_deduplication_window: single-node MergeTree keeps no
-- dedup log by default; 1000 blocks outlast any race for one term (a term
-- is raced for seconds, a renewal is one block).
-- cluster: shard by cityHash64(name)
CREATE TABLE IF NOT EXISTS leases
(
    name       LowCardinality(String),
    term       UInt64,
    holder     String,
    expires_at DateTime64(3, 'UTC'),
    at         DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY (name, term)
TTL toDateTime(at) + INTERVAL 7 DAY
SETTINGS non_replicated_deduplication_window = 1000;
