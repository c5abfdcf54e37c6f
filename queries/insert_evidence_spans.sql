-- Rows arrive in JSONEachRow. optimize_on_insert = 0 as in insert_llm_calls.
INSERT INTO evidence_spans
SETTINGS date_time_input_format = 'best_effort', input_format_parallel_parsing = 0, insert_deduplication_token = {token:String}, optimize_on_insert = 0
