-- The call rows of the given traces (a JSON array of trace IDs) of one
-- tenant that name an end user, each with its start, as FINAL shows them:
-- what an expiry's DELETE matches the holds naming an end user against
-- (fragments/held_by_end_user.sql).
SELECT trace_id, end_user_ref, toUnixTimestamp64Nano(start_time) AS start_ns
FROM llm_calls FINAL
WHERE tenant = {tenant:String}
  AND end_user_ref != ''
  AND trace_id IN (SELECT arrayJoin(JSONExtract({traces:String}, 'Array(String)')))
