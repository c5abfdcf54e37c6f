SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS on_disk, sum(data_uncompressed_bytes) AS uncompressed
FROM system.parts
WHERE database = currentDatabase() AND active
GROUP BY table
HAVING rows > 0
ORDER BY on_disk DESC
SETTINGS output_format_json_quote_64bit_integers = 0
