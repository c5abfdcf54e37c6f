-- Ledger rows of one tenant past ledger retention: how many go, how many a
-- legal hold keeps.
SELECT countIf(empty(hold_ids)) AS expired, countIf(notEmpty(hold_ids)) AS held
FROM call_lifecycle(tenant = {tenant:String})
WHERE start_time < {cutoff:DateTime64}
