-- The end-user search's index: llm_calls' rows again, sorted by end user
-- and start time, so that finding a user's traces (views_search.sql) reads
-- that user's rows only. The bloom filter on end_user_ref (0001) let a
-- frequent user's search read every granule holding one of their calls,
-- a large share of the table (bench/lookup). A projection, not a table
-- filled by a materialized view: the engine keeps it in step with every
-- part of llm_calls (inserts, merges, deletes), so the search finds exactly
-- the rows it found without it, and the engine falls back to the table's
-- own parts wherever a part has none.
--
-- llm_calls is a ReplacingMergeTree: a merge rebuilds the projection from
-- the rows it keeps. Expiry's lightweight DELETE drops the projection of
-- the parts it changes instead of rebuilding it: with 'rebuild', a part's
-- deleted rows stayed visible through its projection until a merge (tried
-- on chDB 26.7); parts without it are read through the table until a merge
-- rebuilds it.
ALTER TABLE llm_calls MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'drop';

-- The columns the search reads: its condition, every filter of
-- views_filter.sql, and the traces it finds.
ALTER TABLE llm_calls ADD PROJECTION IF NOT EXISTS by_end_user
(
    SELECT end_user_ref, tenant, start_time, trace_id, service_name, provider, status, request_model, response_model
    ORDER BY (end_user_ref, tenant, start_time)
);

-- The calls already in the ledger: a background mutation that builds the
-- projection part by part (parts without it are read as before meanwhile).
ALTER TABLE llm_calls MATERIALIZE PROJECTION by_end_user SETTINGS mutations_sync = 0;
