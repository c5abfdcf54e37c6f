-- The end-user search's read of the calls: provider_call_rows' rows again,
-- sorted by end user and start time, so that the search reads the user's
-- kept calls themselves in a range of the projection. Until now it found
-- the user's traces in llm_calls (0013) and then read those traces' calls
-- by (tenant, trace_id): 50 traces were 50 scattered reads, most of an
-- end-user search's time at 1,000,000 calls (bench/lookup). A projection,
-- as in 0013, so the engine keeps it in step with every part of the table
-- (inserts, merges; this table has no lightweight deletes: its rows change
-- by rewrite, and tombstones of a rewrite are rows like any other), and
-- reads the table's own parts wherever a part has none. Reads through it
-- cannot use FINAL (the engine does not use projections with FINAL), so
-- the search keeps each row's newest version itself.
ALTER TABLE provider_call_rows MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'drop';

-- The columns the search reads: its output, every filter of
-- views_filter.sql, and the version columns. All of them cost the table's
-- size again (387 MiB against 112 MiB at 1,000,000 calls), and the search
-- was no faster.
ALTER TABLE provider_call_rows ADD PROJECTION IF NOT EXISTS by_end_user
(
    SELECT
        tenant, trace_id, span_id, service_name, start_time, duration_ms, operation,
        provider, request_model, response_model, response_id, status, error_class,
        input_tokens, output_tokens, cost_usd, cost_status, end_user_ref, version, is_deleted
    ORDER BY (end_user_ref, start_time)
);

-- The calls already kept: a background mutation that builds the
-- projection part by part (parts without it are read as before meanwhile).
ALTER TABLE provider_call_rows MATERIALIZE PROJECTION by_end_user SETTINGS mutations_sync = 0;
