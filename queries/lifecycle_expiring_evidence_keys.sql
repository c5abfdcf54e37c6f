-- The keys of the evidence spans of one tenant past ledger retention
-- unless held (the rule of lifecycle_expirable_evidence, with
-- call_lifecycle's hold match spelled out). By key, as FINAL shows the
-- rows (see lifecycle_expiring_call_keys).
SELECT trace_id, span_id FROM evidence_spans FINAL
WHERE tenant = {tenant:String}
  AND start_time < {cutoff:DateTime64}
  AND NOT
  -- include: held_by_trace_or_time(start_time)
  -- include: not_in_held_call_trace
