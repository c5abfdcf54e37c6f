-- Evidence spans of one tenant past ledger retention. A span is held when a
-- held call is in its trace, or a hold without an end user covers it by
-- trace or time (evidence spans carry no end user). Same rule as
-- lifecycle_expire_evidence.
SELECT countIf(NOT is_held) AS expired, countIf(is_held) AS held
FROM
(
    SELECT
        trace_id IN (SELECT trace_id FROM call_lifecycle(tenant = {tenant:String}) WHERE notEmpty(hold_ids))
        OR arrayExists(s -> s.1 = '' AND (s.2 = '' OR s.2 = trace_id) AND start_time >= s.3 AND start_time < s.4,
            (SELECT groupArray((end_user_ref, trace_id, from_time, to_time)) FROM active_legal_holds WHERE tenant = {tenant:String})) AS is_held
    FROM evidence_spans FINAL
    WHERE tenant = {tenant:String} AND start_time < {cutoff:DateTime64}
)
