-- Whether a hold without an end user covers the row: by its trace, or by
-- its own time, in the column the line including this names.
arrayExists(s -> s.1 = '' AND (s.2 = '' OR s.2 = trace_id) AND ROW_TIME >= s.3 AND ROW_TIME < s.4,
    (SELECT groupArray((end_user_ref, trace_id, from_time, to_time)) FROM active_legal_holds WHERE tenant = {tenant:String}))
