-- An identifier of copy number copy, as replicate gives it.
SELECT docket_bench_copy_id({id:String}, {copy:UInt32}) AS v
