-- The traces of one tenant with a kept provider call that started before
-- a day past cutoff: those whose rows an expiry run at cutoff may have
-- removed (a call's spans are looked for a day either side of it).
SELECT DISTINCT trace_id
FROM provider_call_rows FINAL
WHERE tenant = {tenant:String} AND start_time < {cutoff:DateTime64} + INTERVAL 1 DAY AND NOT is_deleted
