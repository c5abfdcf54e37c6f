-- Copies of every evidence span row, as replicate_llm_calls. Documents are
-- what was retrieved, not keys: they stay.
INSERT INTO evidence_spans
SELECT * REPLACE (
    docket_bench_copy_id(trace_id, copy) AS trace_id,
    docket_bench_copy_id(span_id, copy) AS span_id,
    docket_bench_copy_id(parent_span_id, copy) AS parent_span_id,
    arrayMap(r -> docket_bench_copy_id(r, copy), content_refs) AS content_refs)
FROM evidence_spans
ARRAY JOIN range(1, {copies:UInt32}) AS copy
SETTINGS insert_deduplicate = 0, optimize_on_insert = 0
