-- One page of the objects referenced by the calls a deletion job covers,
-- or by other spans of their traces (provider_content_lifecycle).
SELECT DISTINCT ref
FROM provider_content_lifecycle(tenant = {tenant:String})
WHERE has(deletion_job_ids, {job_id:String}) AND ref > {after:String}
ORDER BY ref
LIMIT {limit:UInt64}
