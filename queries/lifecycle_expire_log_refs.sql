-- Removes links of log records' content references of one tenant past
-- ledger retention unless held (the rule of lifecycle_expirable_log_refs,
-- spelled out as in lifecycle_expiring_evidence_keys).
DELETE FROM log_content_refs
WHERE tenant = {tenant:String}
  AND time < {cutoff:DateTime64}
  AND NOT arrayExists(s -> s.1 = '' AND (s.2 = '' OR s.2 = trace_id) AND time >= s.3 AND time < s.4,
      (SELECT groupArray((end_user_ref, trace_id, from_time, to_time)) FROM active_legal_holds WHERE tenant = {tenant:String}))
  -- include: not_in_held_call_trace
