-- Copies 1 to copies - 1 of every stored call row, keys remapped
-- (replicate_function.sql), everything else as stored. The table's
-- materialized columns, indexes and projection and its row_versions view
-- (0007) are computed for the copies as for any insert. Settings as in
-- insert_llm_calls.
INSERT INTO llm_calls
SELECT * REPLACE (
    docket_bench_copy_id(trace_id, copy) AS trace_id,
    docket_bench_copy_id(span_id, copy) AS span_id,
    docket_bench_copy_id(parent_span_id, copy) AS parent_span_id,
    docket_bench_copy_id(response_id, copy) AS response_id,
    docket_bench_copy_id(end_user_ref, copy) AS end_user_ref,
    docket_bench_copy_id(input_ref, copy) AS input_ref,
    docket_bench_copy_id(output_ref, copy) AS output_ref,
    docket_bench_copy_id(system_instructions_ref, copy) AS system_instructions_ref,
    docket_bench_copy_id(tool_definitions_ref, copy) AS tool_definitions_ref)
FROM llm_calls
ARRAY JOIN range(1, {copies:UInt32}) AS copy
SETTINGS insert_deduplicate = 0, optimize_on_insert = 0
