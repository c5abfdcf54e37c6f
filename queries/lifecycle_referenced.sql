-- Which of a batch of objects of one tenant (newline-separated refs) the
-- ledger has on record: a call's reference column, a span's content
-- references (evidence rows, migration 0006), or a log record's linked to
-- a span of a trace the ledger holds (migration 0010). An object none of
-- these names is unreferenced: nothing can reveal, delete or hold it.
WITH splitByChar('\n', {refs:String}) AS page
SELECT DISTINCT ref
FROM
(
    SELECT arrayJoin([input_ref, output_ref, system_instructions_ref, tool_definitions_ref]) AS ref
    FROM llm_calls
    WHERE tenant = {tenant:String}
      AND hasAny([input_ref, output_ref, system_instructions_ref, tool_definitions_ref], page)
    UNION ALL
    SELECT arrayJoin(content_refs) AS ref
    FROM evidence_spans
    WHERE tenant = {tenant:String} AND hasAny(content_refs, page)
    UNION ALL
    SELECT ref
    FROM log_content_refs
    WHERE tenant = {tenant:String} AND has(page, ref)
      AND trace_id IN
      (
          SELECT trace_id FROM llm_calls WHERE tenant = {tenant:String}
          UNION ALL
          SELECT trace_id FROM evidence_spans WHERE tenant = {tenant:String}
      )
)
WHERE has(page, ref)
