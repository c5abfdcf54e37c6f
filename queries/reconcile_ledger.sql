-- The ledger's side of reconciliation: calls per UTC day, provider, model
-- (the response model, else the requested one) and service, read through
-- provider_calls like every reader (one row per provider call however often
-- it was delivered and however many instrumentations traced it). A provider's report counts the requests it answered, so
-- calls that ended in an error are counted apart (errors). Token sums cover
-- the answered calls that reported them and are NULL when none did;
-- usage_unknown and cache_unknown count the answered calls without them, so
-- a partial sum is never taken for the whole. provider_calls.x names the
-- column, not the result alias of the same name.
SELECT
    toString(toDate(start_time)) AS day,
    toString(provider) AS provider,
    if(response_model != '', response_model, request_model) AS model,
    toString(service_name) AS service,
    countIf(status != 'error') AS requests,
    countIf(status = 'error') AS errors,
    sumIf(provider_calls.input_tokens, status != 'error') AS input_tokens,
    sumIf(provider_calls.output_tokens, status != 'error') AS output_tokens,
    sumIf(provider_calls.cache_read_tokens, status != 'error') AS cache_read_tokens,
    countIf(status != 'error' AND (provider_calls.input_tokens IS NULL OR provider_calls.output_tokens IS NULL)) AS usage_unknown,
    countIf(status != 'error' AND provider_calls.cache_read_tokens IS NULL) AS cache_unknown
FROM provider_calls(tenant = '', traces = '', from = {from:DateTime64}, to = {to:DateTime64})
WHERE has(JSONExtract({providers:String}, 'Array(String)'), provider)
GROUP BY day, provider, model, service
ORDER BY day, provider, model, service
SETTINGS output_format_json_quote_64bit_integers = 0
