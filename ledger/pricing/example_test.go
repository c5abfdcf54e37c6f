package pricing_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/docketlabs/docket/ledger/pricing"
)

func ExampleTable_Cost() {
	tbl, err := pricing.Default()
	if err != nil {
		panic(err)
	}
	in, cached, out, reasoning := int64(12_000), int64(4_000), int64(800), int64(200)
	start := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	c := tbl.Cost("openai", "o3-2025-04-16", "chat", start,
		pricing.Usage{Input: &in, CacheRead: &cached, Output: &out, Reasoning: &reasoning})
	fmt.Println(c.Status, c.String(), c.Display(), c.PriceRef)

	unknown := tbl.Cost("openai", "gpt-nonexistent", "chat", start, pricing.Usage{Input: &in, Output: &out})
	fmt.Println(unknown.Status, unknown.USD == nil, unknown.Display())
	// Output:
	// ok 0.024400000000 $0.0244 genai-prices:openai/o3@2025-06-10
	// unknown_model true —
}

func ExampleLoad() {
	const override = `{"schema": 1, "source": {"name": "acme-contract"}, "providers": [
	  {"id": "openai", "models": [
	    {"id": "gpt-4o", "match": {"or": [{"equals": "gpt-4o"}, {"starts_with": "gpt-4o-20"}]},
	     "periods": [
	       {"prices": {"input": "2.5", "output": "10", "cache_read": "1.25"}},
	       {"start_date": "2026-01-01", "prices": {"input": "2", "output": "8"},
	        "tiers": [{"above_input_tokens": 200000, "prices": {"input": "4", "output": "12"}}]}]}]}]}`
	tbl, err := pricing.Load(strings.NewReader(override))
	if err != nil {
		panic(err)
	}
	in, out := int64(300_000), int64(1_000)
	c := tbl.Cost("openai", "gpt-4o-2024-08-06", "chat", time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC),
		pricing.Usage{Input: &in, Output: &out})
	fmt.Println(c.String(), c.PriceRef)
	// Output: 1.212000000000 acme-contract:openai/gpt-4o@2026-01-01
}
