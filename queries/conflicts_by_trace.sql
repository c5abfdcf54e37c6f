-- Rows of one trace received under a known key with other content: for
-- each key with more than one version, the version every reader sees (the
-- first ingest, highest ingest_order) and each other version, with who
-- sent it and when it first arrived.
SELECT
    source, tenant, trace_id, span_id,
    lower(hex(original.1)) AS original_hash, original.2 AS original_service, original.3 AS original_ingested_at,
    lower(hex(other.1)) AS conflicting_hash, other.2 AS conflicting_service, other.3 AS received_at
FROM
(
    SELECT
        source, tenant, trace_id, span_id,
        argMax((row_hash, service_name, ingested_at), ingest_order) AS original,
        max(ingest_order) AS first,
        groupArray((row_hash, service_name, ingested_at, ingest_order)) AS versions
    FROM row_versions FINAL
    WHERE trace_id = {trace_id:String}
    GROUP BY source, tenant, trace_id, span_id
    HAVING count() > 1
)
ARRAY JOIN arrayFilter(v -> v.4 != first, versions) AS other
ORDER BY source, tenant, span_id, received_at, conflicting_hash
SETTINGS date_time_output_format = 'iso'
