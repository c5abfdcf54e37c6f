SELECT *
FROM content_events
WHERE ({tenant:String} = '' OR tenant = {tenant:String})
  AND ({ref:String} = '' OR ref = {ref:String})
  AND ({job_id:String} = '' OR job_id = {job_id:String})
  AND ({hold_id:String} = '' OR hold_id = {hold_id:String})
ORDER BY at, ref
LIMIT {limit:UInt64}
SETTINGS date_time_output_format = 'iso'
