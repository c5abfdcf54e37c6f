-- Current state of legal holds: the latest snapshot of each.
SELECT *
FROM
(
    SELECT *
    FROM legal_holds
    WHERE ({tenant:String} = '' OR tenant = {tenant:String})
      AND ({hold_id:String} = '' OR hold_id = {hold_id:String})
    ORDER BY at DESC
    LIMIT 1 BY hold_id
)
WHERE {status:String} = '' OR status = {status:String}
ORDER BY created_at DESC, hold_id
LIMIT {limit:UInt64}
SETTINGS date_time_output_format = 'iso'
