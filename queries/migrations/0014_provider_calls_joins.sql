-- provider_calls without a copy of its trace's span IDs on every row.
-- Whether a span's parent and grandparent are spans of the trace was
-- looked up in arrays of all the trace's span and parent IDs, gathered onto
-- each row by a window: memory and time grew with the square of a trace's
-- spans (a trace of 8,000 spans took 5 s of CPU to merge, and the ledger
-- merges a trace again after every write to it), so one sender's long
-- trace could exhaust the collector. The lookups are joins now, linear in
-- the trace. Otherwise as 0010: same rows, same columns. (The joined
-- tables name their columns apart: a name two of them share would be
-- qualified in c.*.)
CREATE OR REPLACE VIEW provider_calls AS
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
    arraySort(arrayDistinct(arrayFilter(r -> r != '', arrayFlatten(groupArray(arrayConcat([input_ref, output_ref, system_instructions_ref, tool_definitions_ref], linked_refs)))))) AS member_refs
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
            multiIf(grandparent_call != '', grandparent_call, parent_call != '', parent_call, span_id) AS root,
            (parent_call != '') + (grandparent_call != '') AS depth,
            max(response_id) OVER (PARTITION BY tenant, trace_id, root) AS group_response_id
        FROM
        (
            SELECT
                c.*,
                linked_refs,
                if(p_present, c.parent_span_id, '') AS parent_call,
                if(parent_call != '' AND g_present, p_parent, '') AS grandparent_call
            FROM
            (
                SELECT * FROM llm_calls FINAL
                WHERE ({tenant:String} = '' OR tenant = {tenant:String})
                  AND ({traces:String} = '' OR trace_id IN splitByChar('\n', {traces:String}))
                  AND start_time >= greatest({from:DateTime64(9, 'UTC')}, toDateTime64('1900-01-02 00:00:00', 9, 'UTC')) - INTERVAL 1 DAY
                  AND start_time < least({to:DateTime64(9, 'UTC')}, toDateTime64('2261-12-30 00:00:00', 9, 'UTC')) + INTERVAL 1 DAY
            ) AS c
            LEFT JOIN
            (
                SELECT tenant AS p_tenant, trace_id AS p_trace, span_id AS p_span, parent_span_id AS p_parent, 1 AS p_present FROM llm_calls FINAL
                WHERE ({tenant:String} = '' OR tenant = {tenant:String})
                  AND ({traces:String} = '' OR trace_id IN splitByChar('\n', {traces:String}))
                  AND start_time >= greatest({from:DateTime64(9, 'UTC')}, toDateTime64('1900-01-02 00:00:00', 9, 'UTC')) - INTERVAL 1 DAY
                  AND start_time < least({to:DateTime64(9, 'UTC')}, toDateTime64('2261-12-30 00:00:00', 9, 'UTC')) + INTERVAL 1 DAY
            ) AS p ON p_tenant = c.tenant AND p_trace = c.trace_id AND p_span = c.parent_span_id
            LEFT JOIN
            (
                SELECT tenant AS g_tenant, trace_id AS g_trace, span_id AS g_span, 1 AS g_present FROM llm_calls FINAL
                WHERE ({tenant:String} = '' OR tenant = {tenant:String})
                  AND ({traces:String} = '' OR trace_id IN splitByChar('\n', {traces:String}))
                  AND start_time >= greatest({from:DateTime64(9, 'UTC')}, toDateTime64('1900-01-02 00:00:00', 9, 'UTC')) - INTERVAL 1 DAY
                  AND start_time < least({to:DateTime64(9, 'UTC')}, toDateTime64('2261-12-30 00:00:00', 9, 'UTC')) + INTERVAL 1 DAY
            ) AS g ON g_tenant = c.tenant AND g_trace = c.trace_id AND g_span = p_parent
            LEFT JOIN
            (
                SELECT tenant AS l_tenant, trace_id AS l_trace, span_id AS l_span, groupArray(ref) AS linked_refs
                FROM
                (
                    SELECT tenant, trace_id, span_id, ref FROM log_content_refs FINAL
                    WHERE ({tenant:String} = '' OR tenant = {tenant:String})
                      AND ({traces:String} = '' OR trace_id IN splitByChar('\n', {traces:String}))
                    UNION ALL
                    SELECT tenant, trace_id, span_id, arrayJoin(content_refs) AS ref FROM evidence_spans FINAL
                    WHERE ({tenant:String} = '' OR tenant = {tenant:String})
                      AND ({traces:String} = '' OR trace_id IN splitByChar('\n', {traces:String}))
                      AND notEmpty(content_refs)
                )
                GROUP BY tenant, trace_id, span_id
            ) AS l ON l_tenant = c.tenant AND l_trace = c.trace_id AND l_span = c.span_id
        )
    )
)
GROUP BY tenant, trace_id, call_key
HAVING argMin(start_time, ord) >= {from:DateTime64(9, 'UTC')} AND argMin(start_time, ord) < {to:DateTime64(9, 'UTC')}
-- The aggregates name their columns after the stored ones; inside them, a
-- name is the stored column.
SETTINGS prefer_column_name_to_alias = 1;
