-- The replay results of one trace in a set of tenants (a JSON array of
-- names; every tenant when all_tenants = 1), oldest first. The tenants as a
-- constant: the tenants of a trace are one primary-key read, not one each.
SELECT *
FROM replay_results
WHERE trace_id = {trace_id:String}
  AND ({all_tenants:UInt32} = 1 OR tenant IN JSONExtract({tenants:String}, 'Array(String)'))
ORDER BY at, run_id, span_id
SETTINGS date_time_output_format = 'iso'
