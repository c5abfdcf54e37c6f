-- The distinct non-empty values each filter can take, sorted, at most max
-- of each. Models are response and request models alike, as the model
-- filter matches either.
SELECT
    arraySlice(arraySort(groupUniqArrayIf(toString(tenant), tenant != '')), 1, {max:UInt32}) AS tenants,
    arraySlice(arraySort(groupUniqArrayIf(toString(service_name), service_name != '')), 1, {max:UInt32}) AS services,
    arraySlice(arraySort(arrayFilter(m -> m != '', groupUniqArrayArray([response_model, request_model]))), 1, {max:UInt32}) AS models,
    arraySlice(arraySort(groupUniqArrayIf(toString(provider), provider != '')), 1, {max:UInt32}) AS providers,
    arraySlice(arraySort(groupUniqArrayIf(toString(status), status != '')), 1, {max:UInt32}) AS statuses
FROM kept_calls(from = {from:DateTime64}, to = {to:DateTime64})
WHERE {filter}
