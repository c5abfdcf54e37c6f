-- End users of random calls: a complaint comes from a call, so active
-- users are drawn more often, as they would complain more often.
SELECT end_user_ref AS v FROM llm_calls
WHERE end_user_ref != '' AND start_time >= {from:DateTime64}
ORDER BY cityHash64(span_id, {seed:UInt64}) LIMIT {n:UInt64}
