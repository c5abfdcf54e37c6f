-- Call durations: how many calls took at most each bound (bounds: comma
-- separated milliseconds, ascending; cumulative counts, one per bound) and
-- exact quantiles. quantilesExact keeps every duration of the range in memory
-- (8 bytes a call) and returns an observed value, the one at position
-- floor(level * calls) in duration order.
SELECT
    count() AS calls,
    sumForEach(arrayMap(b -> toUInt64(duration_ms <= b),
                        arrayMap(s -> toFloat64(s), splitByChar(',', {bounds:String})))) AS at_most,
    quantilesExact(0.5, 0.95, 0.99)(duration_ms) AS quantiles
FROM kept_calls(from = {from:DateTime64}, to = {to:DateTime64})
WHERE {filter}
