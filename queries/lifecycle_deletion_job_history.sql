-- Every recorded state of one deletion job, oldest first.
SELECT *
FROM deletion_jobs
WHERE job_id = {job_id:String}
ORDER BY at
SETTINGS date_time_output_format = 'iso'
