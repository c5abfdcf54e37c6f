-- Copies of the kept provider calls (0012), every rewrite and tombstone
-- with its version, keys remapped as in the rows they were merged from;
-- the lists are sorted again, as provider_calls sorts them. What
-- refresh_provider_calls would write for the copied rows, without merging
-- every trace again.
INSERT INTO provider_call_rows
SELECT * REPLACE (
    docket_bench_copy_id(trace_id, copy) AS trace_id,
    docket_bench_copy_id(span_id, copy) AS span_id,
    docket_bench_copy_id(parent_span_id, copy) AS parent_span_id,
    docket_bench_copy_id(response_id, copy) AS response_id,
    docket_bench_copy_id(end_user_ref, copy) AS end_user_ref,
    docket_bench_copy_id(input_ref, copy) AS input_ref,
    docket_bench_copy_id(output_ref, copy) AS output_ref,
    docket_bench_copy_id(system_instructions_ref, copy) AS system_instructions_ref,
    docket_bench_copy_id(tool_definitions_ref, copy) AS tool_definitions_ref,
    arraySort(arrayMap(s -> docket_bench_copy_id(s, copy), evidence_span_ids)) AS evidence_span_ids,
    arraySort(arrayMap(r -> docket_bench_copy_id(r, copy), member_refs)) AS member_refs)
FROM provider_call_rows
ARRAY JOIN range(1, {copies:UInt32}) AS copy
SETTINGS insert_deduplicate = 0, optimize_on_insert = 0
