-- The identifier of a row's copy number copy: its last part (after the
-- last '/', '_', ':', '.' or '-'; at least 16 and at most 32 characters)
-- replaced by as many characters of a hash of (id, copy), in hex where that
-- part was lowercase hex and in base58 otherwise, so that a copy's trace
-- and span IDs stay valid IDs, response IDs, end-user and content
-- references keep their prefixes and lengths, and every copy's keys are
-- new and its own. '' stays ''.
CREATE OR REPLACE FUNCTION docket_bench_copy_id AS (id, copy) ->
    if(id = '', '', concat(
        substring(id, 1, length(id) - least(length(id), 32, greatest(length(extract(id, '[^/_:.-]*$')), 16))),
        substring(
            if(match(right(id, least(length(id), 32, greatest(length(extract(id, '[^/_:.-]*$')), 16))), '^[0-9a-f]+$'),
                lower(hex(SHA256(concat(id, '/', toString(copy))))),
                base58Encode(SHA256(concat(id, '/', toString(copy))))),
            1, least(length(id), 32, greatest(length(extract(id, '[^/_:.-]*$')), 16)))))
