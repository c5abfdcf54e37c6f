-- The current state of a lease: its highest term, who holds it and for how
-- many more milliseconds by the engine's clock (negative: expired).
-- select_sequential_consistency: on replicated tables, read only replicas
-- that have every claim acknowledged so far.
SELECT
    term,
    holder,
    toInt64(toUnixTimestamp64Milli(expires_at)) - toInt64(toUnixTimestamp64Milli(now64(3))) AS remaining_ms
FROM leases
WHERE name = {name:String}
ORDER BY term DESC, holder
LIMIT 1
SETTINGS select_sequential_consistency = 1
