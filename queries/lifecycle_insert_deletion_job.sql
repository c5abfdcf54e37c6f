INSERT INTO deletion_jobs SETTINGS date_time_input_format = 'best_effort' FORMAT JSONEachRow
