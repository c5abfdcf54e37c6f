-- One page of the objects referenced by calls an active hold covers, or by
-- other spans of their traces (provider_content_lifecycle), that the hold has not
-- been applied to yet (calls that arrived after the hold was created
-- included).
SELECT DISTINCT ref
FROM provider_content_lifecycle(tenant = {tenant:String})
WHERE has(hold_ids, {hold_id:String})
  AND ref > {after:String}
  AND ref NOT IN
  (
      SELECT ref FROM content_events
      WHERE tenant = {tenant:String} AND hold_id = {hold_id:String} AND event = 'held'
  )
ORDER BY ref
LIMIT {limit:UInt64}
