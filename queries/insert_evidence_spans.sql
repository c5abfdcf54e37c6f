-- Rows arrive in JSONEachRow. Settings as in insert_llm_calls.
INSERT INTO evidence_spans
SETTINGS date_time_input_format = 'best_effort', input_format_parallel_parsing = 0, insert_deduplicate = 0, optimize_on_insert = 0
