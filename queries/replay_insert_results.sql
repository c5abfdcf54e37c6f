-- Rows arrive in JSONEachRow.
INSERT INTO replay_results SETTINGS date_time_input_format = 'best_effort'
