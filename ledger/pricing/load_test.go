package pricing_test

import (
	"io"
	"strings"
	"testing"

	"github.com/docketlabs/docket/ledger/pricing"
)

const overrideTable = `{"schema":1,"source":{"name":"acme-prices","commit":"abc"},"providers":[
{"id":"openai","models":[
 {"id":"gpt-4o","match":{"equals":"gpt-4o"},"prices_checked":"2026-11-01","periods":[{"prices":{"input":"1","output":"2"}}]},
 {"id":"tiered","match":{"regex":"^tiered-\\d+$"},"periods":[{"prices":{"input":"1","output":"2"},"tiers":[
   {"above_input_tokens":10,"prices":{"input":"3","output":"4"}},
   {"above_input_tokens":20,"prices":{"input":"5","output":"6"}}]}]}
]},
{"id":"azure","fallbacks":["openai"],"models":[]},
{"id":"watsonx","match":{"contains":"watsonx"},"models":[
 {"id":"granite","match":{"starts_with":"ibm/granite"},"periods":[{"prices":{"input":"0.6","output":"0.6"}}]}
]}
]}`

func TestLoadOverride(t *testing.T) {
	tbl, err := pricing.Load(strings.NewReader(overrideTable))
	if err != nil {
		t.Fatal(err)
	}
	when := at(t, "2026-11-20T00:00:00Z")
	if src := tbl.Source(); src.Name != "acme-prices" || src.Commit != "abc" {
		t.Errorf("Source = %+v", src)
	}
	cases := []struct {
		provider, model string
		in              int64
		usd, ref        string
	}{
		// 1000·1 + 1000·2 per 1M
		{"azure.ai.openai", "gpt-4o", 1000, "0.003000000000", "acme-prices:openai/gpt-4o"},
		{"ibm.watsonx.ai", "ibm/granite-13b-chat-v2", 1000, "0.001200000000", "acme-prices:watsonx/granite"},
		// tiers: ≤10 base, >10 first tier, >20 second tier; 1000 output tokens
		{"openai", "TIERED-1", 10, "0.002010000000", "acme-prices:openai/tiered"},
		{"openai", "tiered-1", 11, "0.004033000000", "acme-prices:openai/tiered"},
		{"openai", "tiered-1", 21, "0.006105000000", "acme-prices:openai/tiered"},
	}
	for _, c := range cases {
		got := tbl.Cost(c.provider, c.model, "chat", when, pricing.Usage{Input: new(c.in), Output: new(int64(1000))})
		if got.Status != pricing.StatusOK || got.String() != c.usd || got.PriceRef != c.ref {
			t.Errorf("%s %s %d: got %s %s %q, want %s %q", c.provider, c.model, c.in, got.Status, got.String(), got.PriceRef, c.usd, c.ref)
		}
	}
	if got := tbl.Cost("openai", "tiered-x", "chat", when, pricing.Usage{Input: new(int64(1)), Output: new(int64(1))}); got.Status != pricing.StatusUnknownModel {
		t.Errorf("regex must not match tiered-x: %s", got.Status)
	}
}

func TestLoadRejects(t *testing.T) {
	model := func(m string) string {
		return `{"schema":1,"source":{"name":"x"},"providers":[{"id":"p","models":[` + m + `]}]}`
	}
	ok := `{"id":"m","match":{"equals":"m"},"periods":[{"prices":{"input":"1","output":"2"}}]}`
	cases := []struct {
		name, input, want string
	}{
		{"not json", `{`, "unexpected EOF"},
		{"trailing data", model(ok) + `{}`, "data after the table"},
		{"unknown field", strings.Replace(model(ok), `"input"`, `"inptu"`, 1), "unknown field"},
		{"wrong schema", strings.Replace(model(ok), `"schema":1`, `"schema":2`, 1), "schema 2"},
		{"no source name", strings.Replace(model(ok), `"name":"x"`, `"name":""`, 1), "source name"},
		{"source name with colon", strings.Replace(model(ok), `"name":"x"`, `"name":"a:b"`, 1), "source name"},
		{"too many decimals", strings.Replace(model(ok), `"1"`, `"0.0000001"`, 1), "at most 6 fractional digits"},
		{"negative price", strings.Replace(model(ok), `"1"`, `"-1"`, 1), "non-negative"},
		{"exponent", strings.Replace(model(ok), `"1"`, `"1e3"`, 1), "plain"},
		{"number not string", strings.Replace(model(ok), `"1"`, `1`, 1), "cannot unmarshal number"},
		{"bad regex", strings.Replace(model(ok), `{"equals":"m"}`, `{"regex":"("}`, 1), "missing closing )"},
		{"two operations", strings.Replace(model(ok), `{"equals":"m"}`, `{"equals":"m","contains":"m"}`, 1), "exactly one"},
		{"no operation", strings.Replace(model(ok), `{"equals":"m"}`, `{}`, 1), "exactly one"},
		{"empty or", strings.Replace(model(ok), `{"equals":"m"}`, `{"or":[]}`, 1), "empty or/and"},
		{"empty literal", strings.Replace(model(ok), `{"equals":"m"}`, `{"equals":""}`, 1), "empty string"},
		{"too deep", strings.Replace(model(ok), `{"equals":"m"}`, strings.Repeat(`{"or":[`, 9)+`{"equals":"m"}`+strings.Repeat(`]}`, 9), 1), "nested deeper"},
		{"bad start date", strings.Replace(model(ok), `{"prices"`, `{"start_date":"2025-13-01","prices"`, 1), "start_date"},
		{"bad time of day", strings.Replace(model(ok), `{"prices"`, `{"time_of_day":{"start":"25:00:00Z","end":"01:00:00Z"},"prices"`, 1), "time_of_day start"},
		{"date and time", strings.Replace(model(ok), `{"prices"`, `{"start_date":"2025-01-01","time_of_day":{"start":"01:00:00Z","end":"02:00:00Z"},"prices"`, 1), "not both"},
		{"tiers not ascending", strings.Replace(model(ok), `}}]}`, `},"tiers":[{"above_input_tokens":5,"prices":{}},{"above_input_tokens":5,"prices":{}}]}]}`, 1), "ascending"},
		{"negative tier", strings.Replace(model(ok), `}}]}`, `},"tiers":[{"above_input_tokens":-2,"prices":{}}]}]}`, 1), "ascending"},
		{"duplicate model", model(ok + "," + ok), "listed twice"},
		{"model id with @", strings.Replace(model(ok), `"id":"m"`, `"id":"m@1"`, 1), "identifier"},
		{"model id with space", strings.Replace(model(ok), `"id":"m"`, `"id":"m 1"`, 1), "identifier"},
		{"model id with NUL", strings.Replace(model(ok), `"id":"m"`, `"id":"m\u0000"`, 1), "identifier"},
		{"model id with invalid UTF-8", strings.Replace(model(ok), `"id":"m"`, "\"id\":\"m\xff\"", 1), "identifier"},
		{"provider id with slash", strings.Replace(model(ok), `"id":"p"`, `"id":"p/q"`, 1), "identifier"},
		{"duplicate provider", `{"schema":1,"source":{"name":"x"},"providers":[{"id":"p","models":[]},{"id":"P","models":[]}]}`, "listed twice"},
		{"unknown fallback", `{"schema":1,"source":{"name":"x"},"providers":[{"id":"p","fallbacks":["q"],"models":[]}]}`, "unknown fallback"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := pricing.Load(strings.NewReader(c.input))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "pricing: load table: ") {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

var blanks = []byte(strings.Repeat(" ", 64<<10))

// spaces is an endless stream of JSON whitespace.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) { return copy(p, blanks), nil }

func TestLoadBoundsInput(t *testing.T) {
	r := io.MultiReader(strings.NewReader(`{"schema":1,"source":{"name":"x"},"providers":[]}`), spaces{})
	_, err := pricing.Load(r)
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("err = %v", err)
	}
}
