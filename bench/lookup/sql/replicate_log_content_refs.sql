-- Copies of every log record's content reference link, as
-- replicate_llm_calls.
INSERT INTO log_content_refs
SELECT * REPLACE (
    docket_bench_copy_id(trace_id, copy) AS trace_id,
    docket_bench_copy_id(span_id, copy) AS span_id,
    docket_bench_copy_id(ref, copy) AS ref)
FROM log_content_refs
ARRAY JOIN range(1, {copies:UInt32}) AS copy
SETTINGS insert_deduplicate = 0, optimize_on_insert = 0
