-- The baseline: a primary-key prefix lookup without FINAL.
SELECT count() AS n FROM llm_calls WHERE tenant = {tenant:String} AND trace_id = {trace_id:String}
