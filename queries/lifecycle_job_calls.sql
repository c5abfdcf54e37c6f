SELECT count() AS calls
FROM provider_call_lifecycle(tenant = {tenant:String})
WHERE has(deletion_job_ids, {job_id:String})
