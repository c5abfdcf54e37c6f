-- One page of the objects referenced by the calls a deletion job covers.
SELECT DISTINCT ref
FROM call_lifecycle(tenant = {tenant:String})
ARRAY JOIN refs AS ref
WHERE has(deletion_job_ids, {job_id:String}) AND ref > {after:String}
ORDER BY ref
LIMIT {limit:UInt64}
