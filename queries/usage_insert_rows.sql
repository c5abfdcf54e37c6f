-- Rows arrive in JSONEachRow (ledger/usage.Save): one provider report row
-- each, with its import's ID and time.
INSERT INTO provider_usage (
    import_id, imported_at, provider, day, endpoint, model, project_id, api_key_id,
    requests, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens
)
SETTINGS date_time_input_format = 'best_effort'
