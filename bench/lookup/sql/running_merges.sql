-- Merges running now on the tables the lookups read.
SELECT toInt32(count()) AS merges FROM system.merges
WHERE database = currentDatabase() AND table IN ('llm_calls', 'provider_call_rows', 'evidence_spans', 'row_versions')
