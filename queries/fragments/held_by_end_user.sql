-- Keeps the rows of the traces a hold naming an end user covers, matched
-- against the parameter users: the call rows of the traces that name an
-- end user, [trace_id, end_user_ref, start in Unix nanoseconds], as FINAL
-- showed them just before (lifecycle_trace_end_users). A constant list, not
-- a subquery of llm_calls: the engine evaluates a DELETE's subquery again
-- for each part it rewrites, and what FINAL shows changes as parts lose
-- rows (a conflicting later version must not decide).
AND trace_id NOT IN
(
    SELECT tupleElement(u, 1)
    FROM (SELECT arrayJoin(JSONExtract({users:String}, 'Array(Tuple(String, String, Int64))')) AS u)
    WHERE arrayExists(s -> s.1 = tupleElement(u, 2) AND (s.2 = '' OR s.2 = tupleElement(u, 1))
            AND fromUnixTimestamp64Nano(tupleElement(u, 3)) >= s.3 AND fromUnixTimestamp64Nano(tupleElement(u, 3)) < s.4,
        (SELECT groupArray((end_user_ref, trace_id, from_time, to_time)) FROM active_legal_holds WHERE tenant = {tenant:String}))
)
