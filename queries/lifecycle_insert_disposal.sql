-- A disposal batch begins or ends (state), at the engine's now.
INSERT INTO disposals (tenant, disposal_id, state, at)
SELECT {tenant:String}, {disposal_id:String}, {state:String}, now64(3)
