-- The disposal batches of a tenant that began within the last within_ms,
-- by the engine's clock, and have not ended. A batch deletes for a bounded
-- time only, so an older one without an end row has stopped deleting.
SELECT disposal_id
FROM disposals
WHERE tenant = {tenant:String} AND at > now64(3) - toIntervalMillisecond({within_ms:UInt64})
GROUP BY disposal_id
HAVING countIf(state = {ended:String}) = 0
ORDER BY disposal_id
