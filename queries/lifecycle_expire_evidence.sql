-- Removes the evidence_spans rows of one tenant under the given keys (a JSON
-- array of [trace_id, span_id]), those lifecycle_expiring_evidence_keys.sql found past ledger
-- retention and not held. Two statements, not one: the engine evaluates a
-- DELETE's subquery again for each part it rewrites, so a subquery judging
-- keys "as FINAL shows them" saw, in a later partition's part, a key whose
-- recorded row an earlier part had just lost, and a later version under
-- that key (a conflict, never shown) surfaced in its place.
DELETE FROM evidence_spans
WHERE tenant = {tenant:String}
  AND (trace_id, span_id) IN
  (
      SELECT tupleElement(k, 1), tupleElement(k, 2)
      FROM (SELECT arrayJoin(JSONExtract({keys:String}, 'Array(Tuple(String, String))')) AS k)
  )
  -- A hold created since the keys were read still keeps them: one on the
  -- trace, by the row's own start…
  AND NOT
  -- include: held_by_trace_or_time(start_time)
  -- …and one naming an end user of the trace's calls.
  -- include: held_by_end_user
