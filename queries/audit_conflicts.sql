-- Conflicts of an audit export: rows received under the key of an exported
-- row with other content (row_conflicts, 0007), for one tenant ('' for
-- all) and a [from, to) range of the rows' start times. The calls file
-- holds the rows first recorded; these are the versions not applied.
SELECT *
FROM row_conflicts(trace_id = '', tenant = {tenant:String}, from = {from:DateTime64}, to = {to:DateTime64})
ORDER BY tenant, start_time, trace_id, span_id, source, received_at, conflicting_hash
