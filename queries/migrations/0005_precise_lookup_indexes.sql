-- Bloom filters with a 0.1% false-positive rate for the complaint lookups,
-- next to the default-rate (2.5%) ones of 0001. A lookup by trace or
-- response ID checks every granule the primary key leaves, and each false
-- positive makes it read that whole granule of every selected column: at 1M
-- calls a trace lookup read 2.35 granules where 1 holds the calls, and a
-- response ID lookup (which the primary key cannot narrow) 4.19. With these
-- indexes both read one (bench/lookup). They cost about 2 bytes a row.
-- MATERIALIZE builds them for existing parts in the background; new parts
-- get them at insert. Both statements may run again harmlessly.
ALTER TABLE llm_calls ADD INDEX IF NOT EXISTS idx_trace_precise trace_id TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE llm_calls ADD INDEX IF NOT EXISTS idx_response_precise response_id TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE evidence_spans ADD INDEX IF NOT EXISTS idx_trace_precise trace_id TYPE bloom_filter(0.001) GRANULARITY 1;
ALTER TABLE llm_calls MATERIALIZE INDEX idx_trace_precise SETTINGS mutations_sync = 0;
ALTER TABLE llm_calls MATERIALIZE INDEX idx_response_precise SETTINGS mutations_sync = 0;
ALTER TABLE evidence_spans MATERIALIZE INDEX idx_trace_precise SETTINGS mutations_sync = 0;
