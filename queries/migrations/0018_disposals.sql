-- Disposals: batches of content objects an expiry or a deletion job is
-- deleting, one row when a batch begins and one when it ends, stamped by
-- the engine's clock. A batch checks holds once, then deletes; a legal
-- hold recorded in between would not stop it. So a new hold waits for the
-- batches of its tenant that began before it and have not ended
-- (ledger/lifecycle fence.go), and a batch deletes for a bounded time
-- only, after which a waiting hold stops waiting. The rows matter for
-- minutes; they are forgotten after a day.
-- cluster: shard by cityHash64(tenant)
CREATE TABLE IF NOT EXISTS disposals
(
    tenant      String,
    disposal_id String,
    state       LowCardinality(String),
    at          DateTime64(3, 'UTC')
)
ENGINE = MergeTree
ORDER BY (tenant, at, disposal_id)
TTL toDateTime(at) + INTERVAL 1 DAY;
