-- Per tenant, the ledger's side of the completeness account: call spans
-- stored (deduplicated, the first write of each) and those stored with a
-- flagged value, by when Docket received them ([from, to) on ingested_at,
-- the exporter's clock, so that they compare with the collector's counts;
-- the bounds are cast to the column's precision, since widening the column
-- to the bounds' overflows on times past 2262);
-- and call row versions refused as conflicts (sent again under a stored key
-- with other content), by the stored row's start time.
SELECT
    tenant,
    sum(spans) AS spans,
    sum(flagged) AS flagged,
    sum(conflicts) AS conflicts
FROM
(
    SELECT tenant, count() AS spans, countIf(notEmpty(attribute_issues)) AS flagged, toUInt64(0) AS conflicts
    FROM llm_calls FINAL
    WHERE ingested_at >= toDateTime64({from:DateTime64}, 3, 'UTC') AND ingested_at < toDateTime64({to:DateTime64}, 3, 'UTC')
    GROUP BY tenant
    UNION ALL
    SELECT tenant, toUInt64(0), toUInt64(0), count()
    FROM row_conflicts(trace_id = '', tenant = '', from = {from:DateTime64}, to = {to:DateTime64})
    WHERE source = 'llm_calls'
    GROUP BY tenant
)
GROUP BY tenant
ORDER BY tenant
SETTINGS output_format_json_quote_64bit_integers = 0
