-- The ledger's tables (not views), and whether a key's rows collapse into
-- one (read with FINAL, so that merges between two counts change nothing).
SELECT name AS table, toBool(engine LIKE 'Replacing%') AS replacing FROM system.tables
WHERE database = currentDatabase() AND engine LIKE '%MergeTree'
ORDER BY name
