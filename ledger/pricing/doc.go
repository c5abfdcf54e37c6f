// Package pricing prices LLM calls for the ledger: a table of token prices
// with effective dates, and an exact cost for each call with a status that
// says why a cost is unknown.
//
//	tbl, err := pricing.Default()
//	c := tbl.Cost(providerName, responseModel, operationName, spanStart, pricing.Usage{Input: &in, Output: &out})
//	// store c.Status, c.PriceRef and c.USD (NULL when nil; c.String() otherwise)
//
// The shipped table (data/prices.json, embedded) is converted from
// pydantic/genai-prices; PROVENANCE.md says from which snapshot and what the
// conversion keeps and drops. Regenerate it after updating source/:
//
//	go generate ./ledger/pricing
//
// Costs are integers of pico-USD (10⁻¹² USD), so they are exact and fit the
// ledger's Decimal(18,12) column. An unknown cost is nil, never zero.
//
// # Override files
//
// Load reads a table in the same format as data/prices.json and replaces
// the shipped table; to add prices on top of it, price with the override
// first and fall back to Default when the status is StatusUnknownModel.
// Prices are decimal strings (USD per million tokens; requests_kcount is USD
// per thousand requests) with at most six fractional digits:
//
//	{"schema": 1, "source": {"name": "acme-contract"}, "providers": [
//	  {"id": "openai", "models": [
//	    {"id": "gpt-4o", "match": {"or": [{"equals": "gpt-4o"}, {"starts_with": "gpt-4o-20"}]},
//	     "periods": [
//	       {"prices": {"input": "2.5", "output": "10", "cache_read": "1.25"}},
//	       {"start_date": "2026-01-01", "prices": {"input": "2", "output": "8"},
//	        "tiers": [{"above_input_tokens": 200000, "prices": {"input": "4", "output": "12"}}]}]}]}]}
//
// The source name prefixes price references ("acme-contract:openai/gpt-4o@2026-01-01").
package pricing

//go:generate go run ./internal/convert -in source/data.json -providers source/providers -commit 47df840a5ab10bbcffb8e5ac01b9899032245d1b -date 2026-08-21 -out data/prices.json
