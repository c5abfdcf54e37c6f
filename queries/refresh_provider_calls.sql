-- Rewrites the kept provider_calls rows of a set of traces (newline-
-- separated trace IDs, every tenant) from the view, after their stored
-- rows changed (migration 0012): a tombstone at version for every row
-- kept so far, then the view's rows one nanosecond later, so a call whose
-- key is unchanged is simply replaced and one that is no longer a call
-- (its key moved to its outermost span, or it expired) is gone.
INSERT INTO provider_call_rows
SELECT * EXCEPT (version, is_deleted), {version:DateTime64} AS version, 1 AS is_deleted
FROM provider_call_rows FINAL
WHERE trace_id IN splitByChar('\n', {traces:String})
UNION ALL
SELECT *, {version:DateTime64} + toIntervalNanosecond(1) AS version, 0 AS is_deleted
FROM provider_calls(tenant = '', traces = {traces:String}, from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59')
