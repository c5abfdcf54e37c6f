-- Rows arrive in JSONEachRow.
INSERT INTO access_log SETTINGS date_time_input_format = 'best_effort'
