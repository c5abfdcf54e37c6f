-- Settings of every audit-export query. The JSON ones pin the canonical row
-- form (the bytes each row is hashed as, see ledger/audit/README.md) so it
-- does not change with the engine's defaults; the Parquet ones bound the
-- engine's memory per row group and read files back in their row order.
SETTINGS
    date_time_output_format = 'iso',
    output_format_json_quote_64bit_integers = 0,
    output_format_json_quote_64bit_floats = 0,
    output_format_json_quote_decimals = 0,
    output_format_json_quote_denormals = 0,
    output_format_json_escape_forward_slashes = 0,
    output_format_json_validate_utf8 = 0,
    output_format_json_map_as_array_of_tuples = 0,
    output_format_decimal_trailing_zeros = 0,
    output_format_parquet_row_group_size = 10000,
    input_format_parquet_preserve_order = 1
