-- Traces to look up: a hash order with the seed, random and repeatable.
SELECT tenant, trace_id FROM llm_calls GROUP BY tenant, trace_id
ORDER BY cityHash64(trace_id, {seed:UInt64}) LIMIT {n:UInt64}
