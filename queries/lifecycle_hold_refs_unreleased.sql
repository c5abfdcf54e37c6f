-- One page of the objects a hold was applied to and not yet released from.
SELECT ref
FROM content_events
WHERE tenant = {tenant:String} AND hold_id = {hold_id:String} AND ref > {after:String}
GROUP BY ref
HAVING countIf(event = 'held') > 0 AND countIf(event = 'released') = 0
ORDER BY ref
LIMIT {limit:UInt64}
