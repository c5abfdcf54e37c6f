INSERT INTO legal_holds SETTINGS date_time_input_format = 'best_effort' FORMAT JSONEachRow
