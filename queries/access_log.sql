SELECT *
FROM access_log
WHERE (tenant = {tenant:String} OR {tenant:String} = '')
  AND (actor = {actor:String} OR {actor:String} = '')
  AND (action = {action:String} OR {action:String} = '')
  AND (outcome = {outcome:String} OR {outcome:String} = '')
  AND at >= {since:DateTime64}
ORDER BY at DESC, event_id
LIMIT {limit:UInt64}
SETTINGS date_time_output_format = 'iso'
