-- Rows arrive in RowBinary, encoded by ledger/rowbinary.go in exactly this
-- column order (a test compares the two lists).
-- optimize_on_insert = 0: collapsing repeated span keys while inserting was
-- 30% of the engine's insert CPU, and it never sufficed anyway (a repeat in
-- another batch lands in another part): merges and FINAL, which every
-- reader uses, collapse repeats wherever they are, keeping the first ingest.
-- insert_deduplicate = 0: no block is ever dropped as "already inserted";
-- exactly-once comes from the table (migration 0007).
INSERT INTO llm_calls (
    tenant, trace_id, span_id, parent_span_id, service_name, span_name,
    start_time, end_time, duration_ms, ttft_ms,
    operation, provider, request_model, response_model, response_id,
    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, usage_source,
    finish_reasons, status, error_type, error_class, http_status, retry_attempt,
    temperature, top_p, top_k, max_tokens, seed, stop_sequences, request_params,
    end_user_ref, input_ref, output_ref, system_instructions_ref, tool_definitions_ref, content_status, content_bytes,
    cost_usd, cost_status, price_ref, attribute_issues, ingested_at
)
SETTINGS insert_deduplicate = 0, optimize_on_insert = 0
