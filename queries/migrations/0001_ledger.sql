-- One row per LLM call span. Rows are immutable evidence: later state
-- (deletion, legal hold) lives in tables of its own, so a replayed batch can
-- never overwrite a state change. ReplacingMergeTree on the span key makes
-- at-least-once delivery idempotent; readers use FINAL.
-- cluster: shard by cityHash64(tenant, trace_id)
CREATE TABLE IF NOT EXISTS llm_calls
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
    INDEX idx_trace trace_id TYPE bloom_filter GRANULARITY 1,
    INDEX idx_response response_id TYPE bloom_filter GRANULARITY 1,
    INDEX idx_end_user end_user_ref TYPE bloom_filter GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(start_time)
ORDER BY (tenant, trace_id, span_id)
SETTINGS non_replicated_deduplication_window = 1000;

-- Spans that are evidence for a complaint even when the trace pipeline samples
-- their trace away: sanitized database queries, retrievals (document IDs and
-- versions) and the GenAI spans around the calls.
-- cluster: shard by cityHash64(tenant, trace_id)
CREATE TABLE IF NOT EXISTS evidence_spans
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
    attribute_issues Array(String),
    ingested_at      DateTime64(3, 'UTC'),
    INDEX idx_trace trace_id TYPE bloom_filter GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(start_time)
ORDER BY (tenant, trace_id, span_id)
SETTINGS non_replicated_deduplication_window = 1000;
