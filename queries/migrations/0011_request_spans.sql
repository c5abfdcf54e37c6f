-- The user's request on the complaint page: the server, producer and
-- consumer spans of a trace that holds an LLM call are evidence spans of
-- categories request, queue and worker. What is kept of them beyond the
-- common columns (route, method, status code, messaging system and
-- destination; the keys conventions.RequestKeys lists, nothing else) is in
-- span_attributes.
ALTER TABLE evidence_spans ADD COLUMN IF NOT EXISTS span_attributes Map(LowCardinality(String), String) AFTER content_refs;

-- The row hash covers span_attributes, so a redelivery that differs there is
-- a visible conflict. Rows without them (every row written before) hash as
-- they did, so an old row sent again is still recognised.
ALTER TABLE evidence_spans MODIFY COLUMN row_hash FixedString(32) MATERIALIZED if(empty(span_attributes),
    SHA256(toString(tuple(
        tenant, trace_id, span_id, parent_span_id, service_name, span_name, kind, category, start_time, end_time, status,
        db_system, db_operation, db_collection, db_query_text, db_query_status, data_source_id, documents, content_refs, attribute_issues))),
    SHA256(toString(tuple(
        tenant, trace_id, span_id, parent_span_id, service_name, span_name, kind, category, start_time, end_time, status,
        db_system, db_operation, db_collection, db_query_text, db_query_status, data_source_id, documents, content_refs, attribute_issues,
        mapSort(span_attributes)))));
