-- The recorded events of a set of objects of one tenant (newline-separated
-- refs), oldest first.
SELECT *
FROM content_events
WHERE tenant = {tenant:String}
  AND ref IN (SELECT arrayJoin(splitByChar('\n', {refs:String})))
ORDER BY at, ref
SETTINGS date_time_output_format = 'iso'
