-- Current state of expiry runs: the latest snapshot of each, newest first.
SELECT *
FROM
(
    SELECT *
    FROM expiry_runs
    WHERE {run_id:String} = '' OR run_id = {run_id:String}
    ORDER BY at DESC
    LIMIT 1 BY run_id
)
ORDER BY started_at DESC, run_id
LIMIT {limit:UInt64}
SETTINGS date_time_output_format = 'iso'
