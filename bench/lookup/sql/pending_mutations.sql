-- Mutations still running on the tables the lookups read, such as a
-- migration's background fill of an index.
SELECT toInt32(count()) AS pending FROM system.mutations
WHERE database = currentDatabase() AND table IN ('llm_calls', 'provider_call_rows', 'evidence_spans') AND NOT is_done
