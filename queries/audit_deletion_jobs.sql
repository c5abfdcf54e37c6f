-- Every recorded snapshot of the deletion jobs of one tenant ('' for all),
-- recorded in [from, to).
SELECT *
FROM deletion_jobs
WHERE ({tenant:String} = '' OR tenant = {tenant:String})
  AND at >= {from:DateTime64}
  AND at < {to:DateTime64}
ORDER BY tenant, at, job_id
