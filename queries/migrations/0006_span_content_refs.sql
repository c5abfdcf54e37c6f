-- Content on spans that are not calls (tool-call arguments and results,
-- retrieved documents' texts, workflow inputs, content events) is stored as
-- a call's is. Its references are kept on the evidence span, so deletion
-- requests and legal holds reach that content too.
ALTER TABLE evidence_spans ADD COLUMN IF NOT EXISTS content_refs Array(String) AFTER documents;

-- The content references on spans of one tenant, with the holds and
-- deletion requests covering any call of the span's trace: deletion requests
-- and holds name end users, and only calls carry the end user. The match is
-- call_lifecycle's, spelled out over the few traces with such spans: read
-- through call_lifecycle, the trace filter did not reach the primary key and
-- every call of the tenant was read (17 ms against 4 ms at 50,000 calls).
CREATE VIEW IF NOT EXISTS span_content_lifecycle AS
SELECT ref, s.start_time AS start_time, c.hold_ids AS hold_ids, c.deletion_job_ids AS deletion_job_ids
FROM
(
    SELECT trace_id, start_time, content_refs
    FROM evidence_spans FINAL
    WHERE tenant = {tenant:String} AND notEmpty(content_refs)
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
      AND trace_id IN (SELECT trace_id FROM evidence_spans WHERE tenant = {tenant:String} AND notEmpty(content_refs))
    GROUP BY trace_id
) AS c ON c.trace_id = s.trace_id
ARRAY JOIN s.content_refs AS ref;

-- Every content object of one tenant that a call references, directly or
-- through another span of its trace, with the holds and deletion requests
-- covering it. start_time is that of the call or span referencing it.
CREATE VIEW IF NOT EXISTS content_lifecycle AS
SELECT ref, start_time, hold_ids, deletion_job_ids
FROM call_lifecycle(tenant = {tenant:String})
ARRAY JOIN refs AS ref
UNION ALL
SELECT ref, start_time, hold_ids, deletion_job_ids
FROM span_content_lifecycle(tenant = {tenant:String});
