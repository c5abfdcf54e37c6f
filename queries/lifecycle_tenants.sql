SELECT DISTINCT tenant
FROM
(
    SELECT DISTINCT tenant FROM llm_calls
    UNION ALL
    SELECT DISTINCT tenant FROM evidence_spans
)
ORDER BY tenant
