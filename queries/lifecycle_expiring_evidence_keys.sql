-- The keys of the evidence spans of one tenant past ledger retention
-- unless held (the rule of lifecycle_expirable_evidence, with
-- call_lifecycle's hold match spelled out). By key, as FINAL shows the
-- rows (see lifecycle_expiring_call_keys).
SELECT trace_id, span_id FROM evidence_spans FINAL
WHERE tenant = {tenant:String}
  AND start_time < {cutoff:DateTime64}
  AND NOT arrayExists(s -> s.1 = '' AND (s.2 = '' OR s.2 = trace_id) AND start_time >= s.3 AND start_time < s.4,
      (SELECT groupArray((end_user_ref, trace_id, from_time, to_time)) FROM active_legal_holds WHERE tenant = {tenant:String}))
  -- include: not_in_held_call_trace
