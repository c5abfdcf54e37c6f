-- A random sample of one tenant's calls in [from, to), optionally of one
-- model (response or request), for a replay run. The order is a hash of the
-- span ID with the seed: random, and the same sample again for the same
-- seed. Replays themselves (service docket-replay) are never sampled.
SELECT * REPLACE (toString(cost_usd) AS cost_usd)
FROM provider_calls(tenant = {tenant:String}, traces = '', from = {from:DateTime64}, to = {to:DateTime64})
WHERE ({model:String} = '' OR response_model = {model:String} OR request_model = {model:String})
  AND service_name != 'docket-replay'
ORDER BY cityHash64(span_id, {seed:UInt64})
LIMIT {size:UInt64}
SETTINGS date_time_output_format = 'iso'
