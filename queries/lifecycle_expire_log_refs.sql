-- Removes links of log records' content references of one tenant past
-- ledger retention unless held (the rule of lifecycle_expirable_log_refs,
-- spelled out as in lifecycle_expiring_evidence_keys).
DELETE FROM log_content_refs
WHERE tenant = {tenant:String}
  AND time < {cutoff:DateTime64}
  AND NOT
  -- include: held_by_trace_or_time(time)
  -- include: not_in_held_call_trace
