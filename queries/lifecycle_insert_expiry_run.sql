INSERT INTO expiry_runs SETTINGS date_time_input_format = 'best_effort' FORMAT JSONEachRow
