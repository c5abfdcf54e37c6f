-- Evidence spans of one tenant past ledger retention. A span is held when a
-- held call is in its trace, or a hold without an end user covers it by
-- trace or time (evidence spans carry no end user). Same rule as
-- lifecycle_expire_evidence.
SELECT countIf(NOT is_held) AS expired, countIf(is_held) AS held
FROM
(
    SELECT
        trace_id IN (SELECT trace_id FROM call_lifecycle(tenant = {tenant:String}) WHERE notEmpty(hold_ids))
        OR
        -- include: held_by_trace_or_time(start_time)
        AS is_held
    FROM evidence_spans FINAL
    WHERE tenant = {tenant:String} AND start_time < {cutoff:DateTime64}
)
