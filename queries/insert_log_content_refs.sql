-- Rows arrive in JSONEachRow. Settings as in insert_llm_calls.
INSERT INTO log_content_refs
SETTINGS date_time_input_format = 'best_effort', input_format_parallel_parsing = 0, insert_deduplicate = 0, optimize_on_insert = 0
