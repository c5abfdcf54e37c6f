-- The tenants in which a key of one trace holds more than one version, the
-- only ones with conflicts (row_conflicts, 0007: a key with more than one
-- distinct row_hash) to read, among tenants (a JSON array of names; every
-- tenant when all_tenants = 1). Almost every trace has none, and this read
-- of row_versions by primary key costs half of what the row_conflicts view
-- costs to plan for a trace without conflicts (bench/lookup). The tenants
-- as a constant, not a subquery: planning the subquery was a fifth of this
-- read's cost.
SELECT DISTINCT tenant
FROM row_versions
WHERE trace_id = {trace_id:String}
  AND ({all_tenants:UInt32} = 1 OR tenant IN JSONExtract({tenants:String}, 'Array(String)'))
GROUP BY source, tenant, span_id
HAVING uniqExact(row_hash) > 1
