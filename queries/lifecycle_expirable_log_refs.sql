-- Links of log records' content references (migration 0010) of one tenant
-- past ledger retention: held as evidence spans are (a held call in the
-- trace, or a hold without an end user covering the trace or time). Same
-- rule as lifecycle_expire_log_refs.
SELECT countIf(NOT is_held) AS expired, countIf(is_held) AS held
FROM
(
    SELECT
        trace_id IN (SELECT trace_id FROM call_lifecycle(tenant = {tenant:String}) WHERE notEmpty(hold_ids))
        OR
        -- include: held_by_trace_or_time(time)
        AS is_held
    FROM log_content_refs FINAL
    WHERE tenant = {tenant:String} AND time < {cutoff:DateTime64}
)
