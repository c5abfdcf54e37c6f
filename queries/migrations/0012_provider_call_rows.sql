-- provider_calls, kept: the rows the view gives for each trace, written
-- when the trace's stored rows change, so that reading the calls of a trace
-- (the complaint page, the complaint search) is a primary-key read of a few
-- rows. Merging at read time cost the same for every trace, matching rows
-- or not: the engine's analysis of the merge took five to ten times a
-- primary-key read (bench/lookup). The rule stays in provider_calls
-- (0008, 0010): the ledger store writes what the view returns for the
-- traces it has just written to (refresh_provider_calls.sql), and every
-- reader that spans many traces (costs, lifecycle, audit, reconcile) reads
-- the view. The ledger's own rows are not touched: these rows are a derived
-- copy, rewritten as a whole for a trace each time, with version = when
-- the rewrite read the ledger. A call whose row key changed (its
-- outermost span arrived later) or that is gone (expiry) gets a
-- tombstone (is_deleted) in the same rewrite, and readers keep only a
-- trace's newest rewrite, so two rewrites racing each other cannot leave
-- the older one's keys visible.
-- cluster: shard by cityHash64(tenant, trace_id)
CREATE TABLE IF NOT EXISTS provider_call_rows
(
    tenant                  LowCardinality(String),
    trace_id                String,
    span_id                 String,
    parent_span_id          String,
    service_name            LowCardinality(String),
    span_name               String,
    start_time              DateTime64(9, 'UTC'),
    end_time                DateTime64(9, 'UTC'),
    duration_ms             Float64,
    ttft_ms                 Nullable(Float64),
    operation               LowCardinality(String),
    provider                LowCardinality(String),
    request_model           String,
    response_model          String,
    response_id             String,
    input_tokens            Nullable(Int64),
    output_tokens           Nullable(Int64),
    cache_read_tokens       Nullable(Int64),
    cache_write_tokens      Nullable(Int64),
    reasoning_tokens        Nullable(Int64),
    usage_source            LowCardinality(String),
    finish_reasons          Array(String),
    status                  LowCardinality(String),
    error_type              String,
    error_class             LowCardinality(String),
    http_status             Nullable(UInt16),
    retry_attempt           Nullable(UInt32),
    temperature             Nullable(Float64),
    top_p                   Nullable(Float64),
    top_k                   Nullable(Float64),
    max_tokens              Nullable(Int64),
    seed                    Nullable(Int64),
    stop_sequences          Array(String),
    request_params          Map(String, String),
    end_user_ref            String,
    input_ref               String,
    output_ref              String,
    system_instructions_ref String,
    tool_definitions_ref    String,
    content_status          LowCardinality(String),
    content_bytes           Nullable(Int64),
    cost_usd                Nullable(Decimal(18, 12)),
    cost_status             LowCardinality(String),
    price_ref               String,
    attribute_issues        Array(String),
    ingested_at             DateTime64(3, 'UTC'),
    evidence_span_ids       Array(String),
    member_refs             Array(String),
    version                 DateTime64(9, 'UTC'),
    is_deleted              UInt8,
    INDEX idx_trace trace_id TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree(version, is_deleted)
PARTITION BY toYYYYMM(start_time)
ORDER BY (tenant, trace_id, span_id)
-- Read a few rows at a time, whole: small granules in compact parts (one
-- file for all columns) cut a trace's read to a quarter of llm_calls'
-- (bench/lookup).
SETTINGS index_granularity = 256, min_bytes_for_wide_part = 1099511627776, min_rows_for_wide_part = 1073741824;

-- The calls already in the ledger, a sixteenth of the traces at a time:
-- merging a million calls at once took over 12 GB. ('-' stands for no
-- trace: an empty list means every trace.)
INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 0), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 1), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 2), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 3), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 4), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 5), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 6), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 7), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 8), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 9), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 10), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 11), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 12), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 13), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 14), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

INSERT INTO provider_call_rows
SELECT *, now64(9) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = (SELECT if(empty(groupUniqArray(trace_id)), '-', arrayStringConcat(groupUniqArray(trace_id), '\n'))
    FROM llm_calls WHERE cityHash64(trace_id) % 16 = 15), from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');
