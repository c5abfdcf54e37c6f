-- What happened to the content objects of one tenant ('' for all):
-- deleted, expired, held, released, recorded in [from, to).
SELECT *
FROM content_events
WHERE ({tenant:String} = '' OR tenant = {tenant:String})
  AND at >= {from:DateTime64}
  AND at < {to:DateTime64}
ORDER BY tenant, at, ref, event, job_id, hold_id
