-- The rows a views query may read; ledger/views puts this condition where
-- the other views_*.sql queries say filter. The granted tenants (all_tenants
-- = 1 for every tenant, else tenants, a JSON array of names), narrowed by the
-- optional filters ('' = any; model matches the response or the request
-- model) and by a [from, to) range of start times. The '' alternatives are
-- constants, so the engine folds them away and the primary key and skip
-- indexes still apply.
({all_tenants:UInt32} = 1 OR has(JSONExtract({tenants:String}, 'Array(String)'), tenant))
AND ({tenant:String} = '' OR tenant = {tenant:String})
AND ({service:String} = '' OR service_name = {service:String})
AND ({model:String} = '' OR response_model = {model:String} OR request_model = {model:String})
AND ({provider:String} = '' OR provider = {provider:String})
AND ({status:String} = '' OR status = {status:String})
AND start_time >= {from:DateTime64}
AND start_time < {to:DateTime64}
