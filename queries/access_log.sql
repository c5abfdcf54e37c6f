SELECT *
FROM access_log
WHERE (tenant = {tenant:String} OR {tenant:String} = '')
  AND at >= {since:DateTime64}
ORDER BY at DESC, event_id
LIMIT {limit:UInt64}
SETTINGS date_time_output_format = 'iso'
