-- The engine version recorded in an export's manifest: CSV and Parquet rows
-- are brought back to their canonical form with such an engine.
SELECT version() AS version
