-- Content that arrives on log records (how @opentelemetry/instrumentation-
-- openai sends Chat Completions prompts and answers: gen_ai.*.message and
-- gen_ai.choice records carrying the call's trace and span IDs) is stored
-- by the content processor like a span's, and its references stay on the
-- log record. The ledger exporter, on the logs pipeline too, keeps one row
-- per reference and the span whose context the record carried, so that
-- content belongs to that span's call: revealed, deleted, held and expired
-- with it. Log records usually arrive before their span (the span ends
-- last), so they are linked when read, not when written. One row per
-- (span, reference): a record delivered twice, or two records with the
-- same content, link it once.
-- cluster: shard by cityHash64(tenant, trace_id)
CREATE TABLE IF NOT EXISTS log_content_refs
(
    tenant       LowCardinality(String),
    trace_id     String,
    span_id      String,
    ref          String,
    event_name   LowCardinality(String),
    time         DateTime64(9, 'UTC'),
    ingested_at  DateTime64(3, 'UTC'),
    INDEX idx_trace trace_id TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_ref ref TYPE bloom_filter(0.001) GRANULARITY 1
)
ENGINE = ReplacingMergeTree
PARTITION BY toYYYYMM(time)
ORDER BY (tenant, trace_id, span_id, ref);

-- A call owns one set of references, member_refs: its spans' reference
-- columns, the other references on those spans and their events (kept on
-- evidence rows of the same span ID, migration 0006), and the references on
-- log records carrying one of its spans' context. Access, deletion, holds
-- and expiry read that set (provider_call_lifecycle reads member_refs).
-- Otherwise as 0008.
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
            FROM
            (
                SELECT c.*, l.refs AS linked_refs
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
                    SELECT tenant, trace_id, span_id, groupArray(ref) AS refs
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
                ) AS l ON l.tenant = c.tenant AND l.trace_id = c.trace_id AND l.span_id = c.span_id
            )
            WINDOW trace AS (PARTITION BY tenant, trace_id)
        )
    )
)
GROUP BY tenant, trace_id, call_key
HAVING argMin(start_time, ord) >= {from:DateTime64(9, 'UTC')} AND argMin(start_time, ord) < {to:DateTime64(9, 'UTC')}
-- The aggregates name their columns after the stored ones; inside them, a
-- name is the stored column.
SETTINGS prefer_column_name_to_alias = 1;

-- Log records carrying the context of a span that is not a call (an agent
-- step, a tool call) are that span's content: covered, like the content on
-- such spans (0006), by whatever covers a call of the trace.
CREATE OR REPLACE VIEW span_content_lifecycle AS
SELECT ref, s.start_time AS start_time, c.hold_ids AS hold_ids, c.deletion_job_ids AS deletion_job_ids
FROM
(
    SELECT trace_id, start_time, content_refs
    FROM evidence_spans FINAL
    WHERE tenant = {tenant:String} AND notEmpty(content_refs)
    UNION ALL
    SELECT trace_id, time AS start_time, [ref] AS content_refs
    FROM log_content_refs FINAL
    WHERE tenant = {tenant:String}
) AS s
INNER JOIN
(
    WITH
        (SELECT groupArray((end_user_ref, trace_id, from_time, to_time, hold_id)) FROM active_legal_holds WHERE tenant = {tenant:String}) AS holds,
        (SELECT groupArray((end_user_ref, trace_id, from_time, to_time, job_id)) FROM deletion_scopes WHERE tenant = {tenant:String}) AS deletions
    SELECT
        trace_id,
        arrayDistinct(arrayFlatten(groupArray(arrayMap(x -> x.5, arrayFilter(x -> (x.1 = '' OR x.1 = end_user_ref) AND (x.2 = '' OR x.2 = trace_id) AND start_time >= x.3 AND start_time < x.4, holds))))) AS hold_ids,
        arrayDistinct(arrayFlatten(groupArray(arrayMap(x -> x.5, arrayFilter(x -> (x.1 = '' OR x.1 = end_user_ref) AND (x.2 = '' OR x.2 = trace_id) AND start_time >= x.3 AND start_time < x.4, deletions))))) AS deletion_job_ids
    FROM llm_calls FINAL
    WHERE tenant = {tenant:String}
      AND trace_id IN
      (
          SELECT trace_id FROM evidence_spans WHERE tenant = {tenant:String} AND notEmpty(content_refs)
          UNION ALL
          SELECT trace_id FROM log_content_refs WHERE tenant = {tenant:String}
      )
    GROUP BY trace_id
) AS c ON c.trace_id = s.trace_id
ARRAY JOIN s.content_refs AS ref;

-- Expiry runs count the links they expire and keep, as they count rows.
ALTER TABLE expiry_runs ADD COLUMN IF NOT EXISTS log_refs_expired UInt64 AFTER evidence_spans_held;

ALTER TABLE expiry_runs ADD COLUMN IF NOT EXISTS log_refs_held UInt64 AFTER log_refs_expired;
