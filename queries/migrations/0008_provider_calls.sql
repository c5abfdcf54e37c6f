-- One row per provider call. Two spans of a trace describe the same call
-- when one is the parent of the other (two instrumentations on one request:
-- the Anthropic SDK's own span and OpenLLMetry's; AI SDK 7's embeddings
-- span and the embedding call under it) or when they carry the same
-- response ID. Spans of one call usually arrive in different batches (the
-- child ends, and is exported, first), so they are merged here, when read,
-- not when written: the stored rows stay as delivered, and every span of the
-- call stays as evidence (evidence_span_ids), its content references all
-- belonging to the call (member_refs).
--
-- The call's row is its outermost span's (for the same response ID, the
-- earliest); each column it lacks is taken from the other spans in that
-- order; usage and cost come together from the span that reported usage.
-- A call belongs to a [from, to) range by its row's start time; its spans
-- are looked for a day either side. Parameters: tenant ('' = all), traces
-- (newline-separated trace IDs, '' = all), from, to (the whole range:
-- '1900-01-01 00:00:00' and '2261-12-31 23:59:59').
CREATE VIEW IF NOT EXISTS provider_calls AS
SELECT
    tenant,
    trace_id,
    argMin(span_id, ord) AS span_id,
    argMin(parent_span_id, ord) AS parent_span_id,
    argMin(service_name, ord) AS service_name,
    argMin(span_name, ord) AS span_name,
    argMin(start_time, ord) AS start_time,
    argMin(end_time, ord) AS end_time,
    argMin(duration_ms, ord) AS duration_ms,
    argMinIf(ttft_ms, ord, ttft_ms IS NOT NULL) AS ttft_ms,
    argMinIf(operation, ord, operation != '') AS operation,
    argMinIf(provider, ord, provider != '') AS provider,
    argMinIf(request_model, ord, request_model != '') AS request_model,
    argMinIf(response_model, ord, response_model != '') AS response_model,
    argMinIf(response_id, ord, response_id != '') AS response_id,
    argMin(input_tokens, usage_ord) AS input_tokens,
    argMin(output_tokens, usage_ord) AS output_tokens,
    argMin(cache_read_tokens, usage_ord) AS cache_read_tokens,
    argMin(cache_write_tokens, usage_ord) AS cache_write_tokens,
    argMin(reasoning_tokens, usage_ord) AS reasoning_tokens,
    argMin(usage_source, usage_ord) AS usage_source,
    argMinIf(finish_reasons, ord, notEmpty(finish_reasons)) AS finish_reasons,
    argMin(status, ord) AS status,
    argMinIf(error_type, ord, error_type != '') AS error_type,
    argMinIf(error_class, ord, error_class != '') AS error_class,
    argMinIf(http_status, ord, http_status IS NOT NULL) AS http_status,
    argMinIf(retry_attempt, ord, retry_attempt IS NOT NULL) AS retry_attempt,
    argMinIf(temperature, ord, temperature IS NOT NULL) AS temperature,
    argMinIf(top_p, ord, top_p IS NOT NULL) AS top_p,
    argMinIf(top_k, ord, top_k IS NOT NULL) AS top_k,
    argMinIf(max_tokens, ord, max_tokens IS NOT NULL) AS max_tokens,
    argMinIf(seed, ord, seed IS NOT NULL) AS seed,
    argMinIf(stop_sequences, ord, notEmpty(stop_sequences)) AS stop_sequences,
    argMinIf(request_params, ord, notEmpty(request_params)) AS request_params,
    argMinIf(end_user_ref, ord, end_user_ref != '') AS end_user_ref,
    argMinIf(input_ref, ord, input_ref != '') AS input_ref,
    argMinIf(output_ref, ord, output_ref != '') AS output_ref,
    argMinIf(system_instructions_ref, ord, system_instructions_ref != '') AS system_instructions_ref,
    argMinIf(tool_definitions_ref, ord, tool_definitions_ref != '') AS tool_definitions_ref,
    argMin(content_status, content_ord) AS content_status,
    argMinIf(content_bytes, ord, content_bytes IS NOT NULL) AS content_bytes,
    argMin(cost_usd, usage_ord) AS cost_usd,
    argMin(cost_status, usage_ord) AS cost_status,
    argMin(price_ref, usage_ord) AS price_ref,
    arrayDistinct(arrayFlatten(groupArray(attribute_issues))) AS attribute_issues,
    argMin(ingested_at, ord) AS ingested_at,
    arrayFilter(s -> s != argMin(span_id, ord), arraySort(groupArray(span_id))) AS evidence_span_ids,
    arraySort(arrayDistinct(arrayFilter(r -> r != '', arrayFlatten(groupArray([input_ref, output_ref, system_instructions_ref, tool_definitions_ref]))))) AS member_refs
FROM
(
    SELECT
        *,
        if(group_response_id != '', concat('r:', group_response_id), concat('s:', root)) AS call_key,
        (depth, start_time, span_id) AS ord,
        (multiIf(usage_source = 'reported', 0, usage_source = 'partial', 1, 2), cost_status != 'ok', depth, start_time, span_id) AS usage_ord,
        (content_status IN ('', 'none'), depth, start_time, span_id) AS content_ord
    FROM
    (
        SELECT
            *,
            if(has(trace_spans, parent_span_id), parent_span_id, '') AS parent_call,
            if(parent_call != '' AND has(trace_spans, trace_parents[indexOf(trace_spans, parent_call)]),
               trace_parents[indexOf(trace_spans, parent_call)], '') AS grandparent_call,
            multiIf(grandparent_call != '', grandparent_call, parent_call != '', parent_call, span_id) AS root,
            (parent_call != '') + (grandparent_call != '') AS depth,
            max(response_id) OVER (PARTITION BY tenant, trace_id, root) AS group_response_id
        FROM
        (
            SELECT
                *,
                groupArray(span_id) OVER trace AS trace_spans,
                groupArray(parent_span_id) OVER trace AS trace_parents
            FROM llm_calls FINAL
            WHERE ({tenant:String} = '' OR tenant = {tenant:String})
              AND ({traces:String} = '' OR trace_id IN splitByChar('\n', {traces:String}))
              AND start_time >= greatest({from:DateTime64(9, 'UTC')}, toDateTime64('1900-01-02 00:00:00', 9, 'UTC')) - INTERVAL 1 DAY
              AND start_time < least({to:DateTime64(9, 'UTC')}, toDateTime64('2261-12-30 00:00:00', 9, 'UTC')) + INTERVAL 1 DAY
            WINDOW trace AS (PARTITION BY tenant, trace_id)
        )
    )
)
GROUP BY tenant, trace_id, call_key
HAVING argMin(start_time, ord) >= {from:DateTime64(9, 'UTC')} AND argMin(start_time, ord) < {to:DateTime64(9, 'UTC')}
-- The aggregates name their columns after the stored ones; inside them, a
-- name is the stored column.
SETTINGS prefer_column_name_to_alias = 1;

-- call_lifecycle for provider calls: the holds and deletion requests that
-- cover a call, matched on its merged row (a second instrumentation's span
-- rarely carries the end user), reach the content of every span of the call
-- (member_refs). Which objects a request deletes, a hold keeps or a call
-- still uses is read through these; expiry removes stored rows span by span
-- and keeps call_lifecycle.
CREATE VIEW IF NOT EXISTS provider_call_lifecycle AS
WITH
    (SELECT groupArray((end_user_ref, trace_id, from_time, to_time, hold_id)) FROM active_legal_holds WHERE tenant = {tenant:String}) AS holds,
    (SELECT groupArray((end_user_ref, trace_id, from_time, to_time, job_id)) FROM deletion_scopes WHERE tenant = {tenant:String}) AS deletions
SELECT
    tenant,
    trace_id,
    span_id,
    start_time,
    member_refs AS refs,
    arrayMap(s -> s.5, arrayFilter(s -> (s.1 = '' OR s.1 = end_user_ref) AND (s.2 = '' OR s.2 = trace_id) AND start_time >= s.3 AND start_time < s.4, holds)) AS hold_ids,
    arrayMap(s -> s.5, arrayFilter(s -> (s.1 = '' OR s.1 = end_user_ref) AND (s.2 = '' OR s.2 = trace_id) AND start_time >= s.3 AND start_time < s.4, deletions)) AS deletion_job_ids
FROM provider_calls(tenant = {tenant:String}, traces = '', from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59');

-- content_lifecycle over provider calls.
CREATE VIEW IF NOT EXISTS provider_content_lifecycle AS
SELECT ref, start_time, hold_ids, deletion_job_ids
FROM provider_call_lifecycle(tenant = {tenant:String})
ARRAY JOIN refs AS ref
UNION ALL
SELECT ref, start_time, hold_ids, deletion_job_ids
FROM span_content_lifecycle(tenant = {tenant:String});
