-- Every recorded snapshot of the legal holds of one tenant ('' for all),
-- recorded in [from, to): the history, not only the current state.
SELECT *
FROM legal_holds
WHERE ({tenant:String} = '' OR tenant = {tenant:String})
  AND at >= {from:DateTime64}
  AND at < {to:DateTime64}
ORDER BY tenant, at, hold_id
