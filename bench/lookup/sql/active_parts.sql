SELECT toInt32(count()) AS parts FROM system.parts
WHERE database = currentDatabase() AND table = 'llm_calls' AND active
