-- Leaves out the rows of a trace with a call a hold covers, as FINAL shows
-- the calls: call_lifecycle's hold match, spelled out.
AND trace_id NOT IN
(
    SELECT trace_id FROM llm_calls FINAL
    WHERE tenant = {tenant:String}
      AND arrayExists(s -> (s.1 = '' OR s.1 = end_user_ref) AND (s.2 = '' OR s.2 = trace_id) AND start_time >= s.3 AND start_time < s.4,
          (SELECT groupArray((end_user_ref, trace_id, from_time, to_time)) FROM active_legal_holds WHERE tenant = {tenant:String}))
)
