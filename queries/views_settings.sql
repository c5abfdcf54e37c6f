-- Settings of every views query (ledger/views appends them).
--
-- Output: pinned, so rows decode the same whatever the engine's defaults
-- (ISO times, 64-bit integers as JSON numbers, decimals without trailing
-- zeros).
--
-- Skip indexes with FINAL: on, without the exact mode's widening. The exact
-- mode also reads every granule whose primary-key range overlaps a granule
-- the index selected, in case a newer copy of a row no longer matches the
-- filter. Copies of a call are the same span delivered again: trace_id,
-- response_id, end_user_ref and every other filtered column are equal in
-- all of them, so every copy of a matching call lies in a selected granule
-- and FINAL still collapses them. At 1M calls the widening made a response
-- ID lookup about five times slower (bench/lookup).
SETTINGS
    date_time_output_format = 'iso',
    output_format_json_quote_64bit_integers = 0,
    output_format_decimal_trailing_zeros = 0,
    use_skip_indexes = 1,
    use_skip_indexes_if_final = 1,
    use_skip_indexes_if_final_exact_mode = 0
