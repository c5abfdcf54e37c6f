-- First write wins, and every different version of a row is kept.
--
-- Until now llm_calls and evidence_spans were ReplacingMergeTree without a
-- version, so under FINAL the newest insert of a span key won: anyone who
-- could send a span could rewrite a recorded call. And the insert dedup
-- token that made retries exactly-once lost acknowledged batches when the
-- process died after the engine logged the token but before the part was
-- committed, and dropped a redelivery that differed in content.
--
-- Now both tables are ReplacingMergeTree(ingest_order). ingest_order comes
-- from Docket's own clock (ingested_at, set by the exporter when the span
-- arrived and kept in the persistent queue, so a replay carries the same
-- one) and orders the FIRST ingest of a key highest; within one millisecond
-- bits of the row hash decide, so the winner never depends on insert order.
-- row_hash is SHA-256 over every column but ingested_at (request_params
-- sorted), so a redelivery is recognised whatever the arrival time.
--
-- Every distinct version of a row received is kept in row_versions, keyed
-- by (key, row_hash), filled by materialized views in the same INSERT: a
-- key with more than one version is a conflict, derived by a query, so
-- detection cannot race with concurrent batches. An insert is
-- acknowledged only after both tables took it; a crash in between leaves
-- the batch in the persistent queue, and its replay collapses in both.
-- No insert dedup token is used: exactly-once comes from these tables.
--
-- Existing data: a new table per ledger table, filled with every physical
-- row of the old one (rows a rewrite had superseded but merges had not yet
-- removed come back as the original, the rewrite as a conflict), then
-- swapped in with EXCHANGE; merges of the new table are stopped until its
-- versions are in row_versions. The copy and the swap run only while the
-- live table lacks ingest_order (the "only if" guards), so the migration
-- can run again after a crash at any point. The materialized views are
-- created after the swap: a view did not follow its table through a RENAME
-- when tried, so renaming llm_calls or evidence_spans later must recreate
-- them.

-- cluster: shard by cityHash64(tenant, trace_id)
CREATE TABLE IF NOT EXISTS llm_calls_0007
(
    tenant                 LowCardinality(String),
    trace_id               String,
    span_id                String,
    parent_span_id         String,
    service_name           LowCardinality(String),
    span_name              String,
    start_time             DateTime64(9, 'UTC'),
    end_time               DateTime64(9, 'UTC'),
    duration_ms            Float64,
    ttft_ms                Nullable(Float64),
    operation              LowCardinality(String),
    provider               LowCardinality(String),
    request_model          String,
    response_model         String,
    response_id            String,
    input_tokens           Nullable(Int64),
    output_tokens          Nullable(Int64),
    cache_read_tokens      Nullable(Int64),
    cache_write_tokens     Nullable(Int64),
    reasoning_tokens       Nullable(Int64),
    usage_source           LowCardinality(String),
    finish_reasons         Array(String),
    status                 LowCardinality(String),
    error_type             String,
    error_class            LowCardinality(String),
    http_status            Nullable(UInt16),
    retry_attempt          Nullable(UInt32),
    temperature            Nullable(Float64),
    top_p                  Nullable(Float64),
    top_k                  Nullable(Float64),
    max_tokens             Nullable(Int64),
    seed                   Nullable(Int64),
    stop_sequences         Array(String),
    request_params         Map(String, String),
    end_user_ref           String,
    input_ref              String,
    output_ref             String,
    system_instructions_ref String,
    tool_definitions_ref   String,
    content_status         LowCardinality(String),
    content_bytes          Nullable(Int64),
    cost_usd               Nullable(Decimal(18, 12)),
    cost_status            LowCardinality(String),
    price_ref              String,
    attribute_issues       Array(String),
    ingested_at            DateTime64(3, 'UTC'),
    row_hash               FixedString(32) MATERIALIZED SHA256(toString(tuple(
        tenant, trace_id, span_id, parent_span_id, service_name, span_name, start_time, end_time, duration_ms, ttft_ms,
        operation, provider, request_model, response_model, response_id,
        input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, usage_source,
        finish_reasons, status, error_type, error_class, http_status, retry_attempt,
        temperature, top_p, top_k, max_tokens, seed, stop_sequences, mapSort(request_params),
        end_user_ref, input_ref, output_ref, system_instructions_ref, tool_definitions_ref, content_status, content_bytes,
        cost_usd, cost_status, price_ref, attribute_issues))),
    -- (2^44 - 1 - milliseconds since 1970, clamped) << 20 | 20 bits of row_hash.
    ingest_order           UInt64 MATERIALIZED bitOr(bitShiftLeft(toUInt64(17592186044415 - least(greatest(toUnixTimestamp64Milli(ingested_at), 0), 17592186044415)), 20),
        reinterpretAsUInt64(substring(row_hash, 1, 8)) % 1048576),
    INDEX idx_trace trace_id TYPE bloom_filter GRANULARITY 1,
    INDEX idx_response response_id TYPE bloom_filter GRANULARITY 1,
    INDEX idx_end_user end_user_ref TYPE bloom_filter GRANULARITY 1,
    INDEX idx_trace_precise trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_response_precise response_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(ingest_order)
PARTITION BY toYYYYMM(start_time)
ORDER BY (tenant, trace_id, span_id);

-- cluster: shard by cityHash64(tenant, trace_id)
CREATE TABLE IF NOT EXISTS evidence_spans_0007
(
    tenant           LowCardinality(String),
    trace_id         String,
    span_id          String,
    parent_span_id   String,
    service_name     LowCardinality(String),
    span_name        String,
    kind             LowCardinality(String),
    category         LowCardinality(String),
    start_time       DateTime64(9, 'UTC'),
    end_time         DateTime64(9, 'UTC'),
    status           LowCardinality(String),
    db_system        LowCardinality(String),
    db_operation     String,
    db_collection    String,
    db_query_text    Nullable(String),
    db_query_status  LowCardinality(String),
    data_source_id   String,
    documents        Array(Tuple(id String, version String, score Nullable(Float64))),
    content_refs     Array(String),
    attribute_issues Array(String),
    ingested_at      DateTime64(3, 'UTC'),
    row_hash         FixedString(32) MATERIALIZED SHA256(toString(tuple(
        tenant, trace_id, span_id, parent_span_id, service_name, span_name, kind, category, start_time, end_time, status,
        db_system, db_operation, db_collection, db_query_text, db_query_status, data_source_id, documents, content_refs, attribute_issues))),
    ingest_order     UInt64 MATERIALIZED bitOr(bitShiftLeft(toUInt64(17592186044415 - least(greatest(toUnixTimestamp64Milli(ingested_at), 0), 17592186044415)), 20),
        reinterpretAsUInt64(substring(row_hash, 1, 8)) % 1048576),
    INDEX idx_trace trace_id TYPE bloom_filter GRANULARITY 1,
    INDEX idx_trace_precise trace_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(ingest_order)
PARTITION BY toYYYYMM(start_time)
ORDER BY (tenant, trace_id, span_id);

-- Every distinct version of a ledger row: source is the table. The first
-- ingest of each version is kept (same ingest_order as the table's).
-- Hashes and senders only, no row content: the original is in its table,
-- and what a conflicting sender sent is told by who and when.
-- cluster: shard by cityHash64(tenant, trace_id)
CREATE TABLE IF NOT EXISTS row_versions
(
    source       LowCardinality(String),
    tenant       LowCardinality(String),
    trace_id     String,
    span_id      String,
    row_hash     FixedString(32),
    service_name LowCardinality(String),
    start_time   DateTime64(9, 'UTC'),
    ingested_at  DateTime64(3, 'UTC'),
    ingest_order UInt64,
    INDEX idx_trace trace_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(ingest_order)
PARTITION BY toYYYYMM(start_time)
ORDER BY (tenant, trace_id, span_id, source, row_hash);

-- Copy every physical row, merges stopped and nothing collapsed on insert
-- so that each version reaches row_versions; then swap.
-- only if: SELECT count() = 0 AS run FROM system.columns WHERE database = currentDatabase() AND table = 'llm_calls' AND name = 'ingest_order'
SYSTEM STOP MERGES llm_calls_0007;

-- only if: SELECT count() = 0 AS run FROM system.columns WHERE database = currentDatabase() AND table = 'llm_calls' AND name = 'ingest_order'
INSERT INTO llm_calls_0007 SELECT * FROM llm_calls SETTINGS optimize_on_insert = 0;

-- only if: SELECT count() = 0 AS run FROM system.columns WHERE database = currentDatabase() AND table = 'llm_calls' AND name = 'ingest_order'
INSERT INTO row_versions
SELECT 'llm_calls', tenant, trace_id, span_id, row_hash, service_name, start_time, ingested_at, ingest_order
FROM llm_calls_0007;

-- only if: SELECT count() = 0 AS run FROM system.columns WHERE database = currentDatabase() AND table = 'llm_calls' AND name = 'ingest_order'
EXCHANGE TABLES llm_calls AND llm_calls_0007;

SYSTEM START MERGES llm_calls;

-- only if: SELECT count() = 0 AS run FROM system.columns WHERE database = currentDatabase() AND table = 'evidence_spans' AND name = 'ingest_order'
SYSTEM STOP MERGES evidence_spans_0007;

-- only if: SELECT count() = 0 AS run FROM system.columns WHERE database = currentDatabase() AND table = 'evidence_spans' AND name = 'ingest_order'
INSERT INTO evidence_spans_0007 SELECT * FROM evidence_spans SETTINGS optimize_on_insert = 0;

-- only if: SELECT count() = 0 AS run FROM system.columns WHERE database = currentDatabase() AND table = 'evidence_spans' AND name = 'ingest_order'
INSERT INTO row_versions
SELECT 'evidence_spans', tenant, trace_id, span_id, row_hash, service_name, start_time, ingested_at, ingest_order
FROM evidence_spans_0007;

-- only if: SELECT count() = 0 AS run FROM system.columns WHERE database = currentDatabase() AND table = 'evidence_spans' AND name = 'ingest_order'
EXCHANGE TABLES evidence_spans AND evidence_spans_0007;

SYSTEM START MERGES evidence_spans;

-- After the swaps these are the old tables (or, on a re-run, empty ones).
DROP TABLE IF EXISTS llm_calls_0007;
DROP TABLE IF EXISTS evidence_spans_0007;

CREATE MATERIALIZED VIEW IF NOT EXISTS llm_calls_versions TO row_versions AS
SELECT 'llm_calls' AS source, tenant, trace_id, span_id, row_hash, service_name, start_time, ingested_at, ingest_order
FROM llm_calls;

CREATE MATERIALIZED VIEW IF NOT EXISTS evidence_spans_versions TO row_versions AS
SELECT 'evidence_spans' AS source, tenant, trace_id, span_id, row_hash, service_name, start_time, ingested_at, ingest_order
FROM evidence_spans;

-- Conflicts: for each key with more than one version, the version every
-- reader sees (the first ingest, highest ingest_order) against each other
-- version, with who sent it and when it first arrived. '' selects every
-- trace or tenant; from and to bound the start_time of the row every
-- reader sees (a conflicting version may claim another).
CREATE VIEW IF NOT EXISTS row_conflicts AS
SELECT
    source, tenant, trace_id, span_id,
    lower(hex(original.1)) AS original_hash, original.2 AS original_service, original.3 AS original_ingested_at,
    lower(hex(other.1)) AS conflicting_hash, other.2 AS conflicting_service, other.3 AS received_at, original_start AS start_time
FROM
(
    SELECT
        source, tenant, trace_id, span_id,
        argMax((row_hash, service_name, ingested_at), ingest_order) AS original,
        argMax(start_time, ingest_order) AS original_start,
        max(ingest_order) AS first,
        groupArray((row_hash, service_name, ingested_at, ingest_order)) AS versions
    FROM row_versions FINAL
    WHERE ({trace_id:String} = '' OR trace_id = {trace_id:String})
      AND ({tenant:String} = '' OR tenant = {tenant:String})
    GROUP BY source, tenant, trace_id, span_id
    HAVING count() > 1 AND original_start >= {from:DateTime64(9)} AND original_start < {to:DateTime64(9)}
)
ARRAY JOIN arrayFilter(v -> v.4 != first, versions) AS other;
