-- Access-log rows of an audit export: one tenant ('' for all), recorded in
-- [from, to).
SELECT *
FROM access_log
WHERE ({tenant:String} = '' OR tenant = {tenant:String})
  AND at >= {from:DateTime64}
  AND at < {to:DateTime64}
ORDER BY tenant, at, event_id
