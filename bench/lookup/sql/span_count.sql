-- The call spans in the ledger, each once: what the generator wrote, one
-- span per call. Not CountCalls, which merges every call of the ledger
-- (provider_calls) and needs memory in proportion to the ledger.
SELECT count() AS spans FROM llm_calls FINAL
SETTINGS output_format_json_quote_64bit_integers = 0
