-- Every recorded snapshot of the expiry runs, recorded in [from, to). For
-- one tenant only the runs limited to it: a run over all tenants carries
-- counts of the others.
SELECT *
FROM expiry_runs
WHERE ({tenant:String} = '' OR tenants = [{tenant:String}])
  AND at >= {from:DateTime64}
  AND at < {to:DateTime64}
ORDER BY at, run_id
