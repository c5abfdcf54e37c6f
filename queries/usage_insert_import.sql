-- One import's provenance, in JSONEachRow, written after its rows so a
-- failed import covers no day.
INSERT INTO usage_imports (
    import_id, imported_at, actor, source, origin, provider, from_day, to_day, rows
)
SETTINGS date_time_input_format = 'best_effort'
