-- The keys (trace_id, span_id) of the ledger rows of one tenant past
-- ledger retention unless a legal
-- hold covers them. A hold covers a call, and a call can be several spans
-- of which only one carries the end user (two instrumentations of one
-- request: provider_calls, migration 0008); so a row is kept while a hold
-- covers any call row of its trace, the rule evidence spans follow too.
-- call_lifecycle's hold match is spelled out (a fragment) as lifecycle_expirable_calls
-- counts it; holds are read just before the delete (which checks every hold
-- again). Rows go by key, judged as
-- FINAL shows them: a later version under the same key (a conflict, never
-- shown) must neither decide nor be left to surface when the recorded row
-- goes.
SELECT trace_id, span_id FROM llm_calls FINAL
WHERE tenant = {tenant:String}
  AND start_time < {cutoff:DateTime64}
  -- include: not_in_held_call_trace
