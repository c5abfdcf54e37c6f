-- Lifecycle states: legal holds, deletion requests, expiry runs and what
-- happened to each content object. ClickHouse has no transactions, so every
-- state change is an appended row: a hold or a job is written as a full
-- snapshot each time it changes, and its current state is its latest row
-- (ORDER BY at DESC LIMIT 1 BY id). Nothing here is ever updated in place,
-- so the history is the table itself.

-- Legal holds. Scope: a whole tenant, narrowed by end user, trace and/or a
-- [from_time, to_time) range of call start times; '' and the sentinel times
-- mean "not narrowed". status: active | released.
-- cluster: shard by cityHash64(hold_id)
CREATE TABLE IF NOT EXISTS legal_holds
(
    hold_id        String,
    tenant         LowCardinality(String),
    end_user_ref   String,
    trace_id       String,
    from_time      DateTime64(9, 'UTC'),
    to_time        DateTime64(9, 'UTC'),
    reason         String,
    created_by     String,
    created_at     DateTime64(9, 'UTC'),
    status         LowCardinality(String),
    released_by    String,
    released_at    Nullable(DateTime64(9, 'UTC')),
    release_reason String,
    at             DateTime64(9, 'UTC')
)
ENGINE = MergeTree
ORDER BY (tenant, hold_id, at);

-- Deletion requests ("delete this end user's / trace's / tenant's content")
-- and every run of them. The ledger rows stay; only content objects go.
-- A request covers calls that started before it was made (to_time is capped
-- at requested_at by deletion_scopes). status: pending | running |
-- blocked_by_hold | done | failed.
-- cluster: shard by cityHash64(job_id)
CREATE TABLE IF NOT EXISTS deletion_jobs
(
    job_id                String,
    tenant                LowCardinality(String),
    end_user_ref          String,
    trace_id              String,
    from_time             DateTime64(9, 'UTC'),
    to_time               DateTime64(9, 'UTC'),
    reason                String,
    requested_by          String,
    requested_at          DateTime64(9, 'UTC'),
    status                LowCardinality(String),
    run_by                String,
    calls_matched         UInt64,
    objects_matched       UInt64,
    objects_deleted       UInt64,
    objects_kept_shared   UInt64,
    objects_held          UInt64,
    error                 String,
    at                    DateTime64(9, 'UTC')
)
ENGINE = MergeTree
ORDER BY (tenant, job_id, at);

-- Retention expiry runs, dry runs included. status: running | done | failed.
-- cluster: shard by cityHash64(run_id)
CREATE TABLE IF NOT EXISTS expiry_runs
(
    run_id                 String,
    as_of                  DateTime64(9, 'UTC'),
    dry_run                Bool,
    tenants                Array(String),
    run_by                 String,
    reason                 String,
    started_at             DateTime64(9, 'UTC'),
    status                 LowCardinality(String),
    objects_scanned        UInt64,
    objects_expired        UInt64,
    objects_kept_live      UInt64,
    objects_held           UInt64,
    calls_expired          UInt64,
    calls_held             UInt64,
    evidence_spans_expired UInt64,
    evidence_spans_held    UInt64,
    error                  String,
    at                     DateTime64(9, 'UTC')
)
ENGINE = MergeTree
ORDER BY (run_id, at);

-- What happened to each content object: deleted (by a deletion job),
-- expired (by an expiry run), held / released (by a legal hold). This is
-- what lets the evidence page say "deleted on request at T" or "on legal
-- hold H" for content that is no longer, or still, in the store.
-- cluster: shard by cityHash64(tenant, ref)
CREATE TABLE IF NOT EXISTS content_events
(
    tenant  LowCardinality(String),
    ref     String,
    event   LowCardinality(String),
    at      DateTime64(9, 'UTC'),
    actor   String,
    job_id  String,
    hold_id String,
    detail  LowCardinality(String)
)
ENGINE = MergeTree
ORDER BY (tenant, ref, at);

CREATE VIEW IF NOT EXISTS active_legal_holds AS
SELECT hold_id, tenant, end_user_ref, trace_id, from_time, to_time
FROM
(
    SELECT hold_id, tenant, end_user_ref, trace_id, from_time, to_time, status
    FROM legal_holds
    ORDER BY at DESC
    LIMIT 1 BY hold_id
)
WHERE status = 'active';

CREATE VIEW IF NOT EXISTS deletion_scopes AS
SELECT DISTINCT job_id, tenant, end_user_ref, trace_id, from_time, least(to_time, requested_at) AS to_time
FROM deletion_jobs;

-- Every call of one tenant with the active holds and the deletion requests
-- that cover it. Holds and requests are few; they are read once per query
-- and matched per row, so this is one pass over the tenant's calls.
-- Match: (end_user_ref, trace_id, from_time, to_time, id).
CREATE VIEW IF NOT EXISTS call_lifecycle AS
WITH
    (SELECT groupArray((end_user_ref, trace_id, from_time, to_time, hold_id)) FROM active_legal_holds WHERE tenant = {tenant:String}) AS holds,
    (SELECT groupArray((end_user_ref, trace_id, from_time, to_time, job_id)) FROM deletion_scopes WHERE tenant = {tenant:String}) AS deletions
SELECT
    tenant,
    trace_id,
    span_id,
    start_time,
    arrayFilter(r -> r != '', [input_ref, output_ref, system_instructions_ref, tool_definitions_ref]) AS refs,
    arrayMap(s -> s.5, arrayFilter(s -> (s.1 = '' OR s.1 = end_user_ref) AND (s.2 = '' OR s.2 = trace_id) AND start_time >= s.3 AND start_time < s.4, holds)) AS hold_ids,
    arrayMap(s -> s.5, arrayFilter(s -> (s.1 = '' OR s.1 = end_user_ref) AND (s.2 = '' OR s.2 = trace_id) AND start_time >= s.3 AND start_time < s.4, deletions)) AS deletion_job_ids
FROM llm_calls FINAL
WHERE tenant = {tenant:String};
