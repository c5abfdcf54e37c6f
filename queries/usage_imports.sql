-- The latest imports, newest first ('' provider = all).
SELECT import_id, imported_at, actor, toString(source) AS source, origin, toString(provider) AS provider,
       toString(from_day) AS from_day, toString(to_day) AS to_day, rows
FROM usage_imports
WHERE {provider:String} = '' OR provider = {provider:String}
ORDER BY imported_at DESC, import_id
LIMIT {limit:UInt32}
SETTINGS date_time_output_format = 'iso', output_format_json_quote_64bit_integers = 0
