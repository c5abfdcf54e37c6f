-- The recorded events of a set of objects of one tenant (newline-separated
-- refs), oldest first. The list as a constant, not a subquery: planning
-- the subquery was a third of this read's cost (bench/lookup).
SELECT *
FROM content_events
WHERE tenant = {tenant:String}
  AND ref IN splitByChar('\n', {refs:String})
ORDER BY at, ref
SETTINGS date_time_output_format = 'iso'
