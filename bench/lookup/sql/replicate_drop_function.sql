DROP FUNCTION IF EXISTS docket_bench_copy_id
