-- The provider's side of reconciliation: for each provider and day in
-- [from, to), the rows of the latest import that covered the day
-- (usage_imports.[from_day, to_day)), summed per model, project and key. A
-- re-import thus replaces an earlier one in what is read while both stay
-- stored. A covered day without rows comes back once with rows = 0: the
-- provider reported no usage, which differs from a day never imported.
WITH latest AS (
    SELECT provider, d AS day, argMax(import_id, imported_at) AS import_id
    FROM usage_imports
    ARRAY JOIN arrayMap(i -> addDays(from_day, i), range(toUInt32(greatest(dateDiff('day', from_day, to_day), 0)))) AS d
    WHERE d >= toDate({from:DateTime64}) AND d < toDate({to:DateTime64})
      AND has(JSONExtract({providers:String}, 'Array(String)'), provider)
    GROUP BY provider, d
)
SELECT
    toString(l.day) AS day,
    toString(l.provider) AS provider,
    any(l.import_id) AS import_id,
    u.model AS model,
    u.project_id AS project_id,
    u.api_key_id AS api_key_id,
    countIf(u.import_id != '') AS rows,
    sum(u.requests) AS requests,
    sum(u.input_tokens) AS input_tokens,
    sum(u.output_tokens) AS output_tokens,
    sum(u.cache_read_tokens) AS cache_read_tokens
FROM latest AS l
LEFT JOIN provider_usage AS u ON u.import_id = l.import_id AND u.provider = l.provider AND u.day = l.day
GROUP BY l.day, l.provider, u.model, u.project_id, u.api_key_id
ORDER BY day, provider, model, project_id, api_key_id
SETTINGS output_format_json_quote_64bit_integers = 0
