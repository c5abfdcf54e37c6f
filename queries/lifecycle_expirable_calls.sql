-- Ledger rows of one tenant past ledger retention: how many go, how many a
-- legal hold keeps (a hold on any call of the row's trace keeps it; see
-- lifecycle_expire_calls).
SELECT countIf(NOT is_held) AS expired, countIf(is_held) AS held
FROM
(
    SELECT trace_id IN (SELECT trace_id FROM call_lifecycle(tenant = {tenant:String}) WHERE notEmpty(hold_ids)) AS is_held
    FROM call_lifecycle(tenant = {tenant:String})
    WHERE start_time < {cutoff:DateTime64}
)
