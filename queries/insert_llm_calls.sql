INSERT INTO llm_calls SETTINGS date_time_input_format = 'best_effort', insert_deduplication_token = {token:String} FORMAT JSONEachRow
