-- Response IDs to look up.
SELECT response_id AS v FROM llm_calls
ORDER BY cityHash64(response_id, {seed:UInt64}) LIMIT {n:UInt64}
