-- Current state of deletion jobs: the latest snapshot of each.
SELECT *
FROM
(
    SELECT *
    FROM deletion_jobs
    WHERE ({tenant:String} = '' OR tenant = {tenant:String})
      AND ({job_id:String} = '' OR job_id = {job_id:String})
    ORDER BY at DESC
    LIMIT 1 BY job_id
)
WHERE {status:String} = '' OR status = {status:String}
ORDER BY requested_at DESC, job_id
LIMIT {limit:UInt64}
SETTINGS date_time_output_format = 'iso'
