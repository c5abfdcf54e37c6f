-- The provider calls that start in a time window, read from the kept rows
-- of provider_call_rows (0012) instead of merged from the ledger's rows:
-- for the ledger views over days of every tenant, where provider_calls
-- merged every span of the window again (and every evidence span and log
-- record that carries a content reference, whatever its time) and took
-- seconds of CPU per view at 1,000,000 calls (deploy/CAPACITY.md). The
-- rows are those provider_calls gives, each trace as its newest rewrite
-- left it; a call is in the window by its own start time, as in
-- provider_calls.
CREATE OR REPLACE VIEW kept_calls AS
SELECT * EXCEPT (version, is_deleted, newest)
FROM
(
    SELECT *, max(version) OVER (PARTITION BY tenant, trace_id) AS newest
    FROM provider_call_rows FINAL
    WHERE start_time >= {from:DateTime64(9, 'UTC')} AND start_time < {to:DateTime64(9, 'UTC')}
)
WHERE version = newest AND NOT is_deleted;
