-- The providers' own usage reports (OpenAI organization Usage API, Anthropic
-- Admin usage report, or their CSV exports), one row per day bucket and
-- group, with the provenance of the import that brought it. Append-only:
-- a report imported again (providers revise recent days) is a new import,
-- and readers take each cell from its latest import, so no import is
-- silently overwritten.
CREATE TABLE IF NOT EXISTS provider_usage
(
    import_id          String,
    imported_at        DateTime64(3, 'UTC'),
    provider           LowCardinality(String),
    day                Date,
    endpoint           LowCardinality(String),
    model              String,
    project_id         String,
    api_key_id         String,
    requests           Nullable(Int64),
    input_tokens       Int64,
    output_tokens      Int64,
    cache_read_tokens  Int64,
    cache_write_tokens Nullable(Int64)
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(day)
ORDER BY (provider, day, model, project_id, api_key_id, endpoint, imported_at);

-- One row per import: what was asked for ([from_day, to_day) of which
-- provider), from where (source api or file; the endpoint or file name),
-- when and by whom, and how many rows it brought. A day an import covered
-- without rows had no usage, which differs from a day never imported.
CREATE TABLE IF NOT EXISTS usage_imports
(
    import_id   String,
    imported_at DateTime64(3, 'UTC'),
    actor       String,
    source      LowCardinality(String),
    origin      String,
    provider    LowCardinality(String),
    from_day    Date,
    to_day      Date,
    rows        UInt64
)
ENGINE = MergeTree
ORDER BY (provider, imported_at, import_id);
