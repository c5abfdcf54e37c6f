-- For a batch of objects of one tenant (newline-separated refs): is any call
-- that references it still live (started at or after the content retention
-- cutoff and not covered by a deletion request), and is any such call on
-- legal hold? Objects no call references do not appear.
SELECT
    ref,
    max(start_time >= {cutoff:DateTime64} AND empty(deletion_job_ids)) AS live,
    max(notEmpty(hold_ids)) AS held
FROM provider_call_lifecycle(tenant = {tenant:String})
ARRAY JOIN refs AS ref
WHERE ref IN (SELECT arrayJoin(splitByChar('\n', {refs:String})))
GROUP BY ref
