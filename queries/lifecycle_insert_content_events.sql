INSERT INTO content_events SETTINGS date_time_input_format = 'best_effort' FORMAT JSONEachRow
