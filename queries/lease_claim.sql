-- Claims the given term of a lease for a holder until ttl_ms from the
-- engine's now. The token makes the claim a compare-and-set: a second
-- claim of the same term is dropped as a duplicate block, whoever sent it.
-- distributed_foreground_insert: on a cluster the claim reaches its shard
-- before the claimant reads the lease back.
INSERT INTO leases (name, term, holder, expires_at, at)
SETTINGS insert_deduplicate = 1, insert_deduplication_token = {token:String}, distributed_foreground_insert = 1
SELECT {name:String}, {term:UInt64}, {holder:String}, now64(3) + toIntervalMillisecond({ttl_ms:UInt64}), now64(3)
