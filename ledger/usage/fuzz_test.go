package usage_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/usage"
)

// FuzzParseCSV: any input is rows that hold the invariants or an error,
// never a panic; and the same input parses the same way twice.
func FuzzParseCSV(f *testing.F) {
	for _, name := range []string{"testdata/openai_usage.csv", "testdata/anthropic_usage.csv"} {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(false, b)
		f.Add(true, b)
	}
	f.Add(true, []byte("date,uncached_input_tokens,output_tokens,ephemeral_1h_input_tokens\n2026-11-29,1,2,3\n"))
	f.Add(false, []byte("\ufeffDay,Requests,Input_Tokens,Output_Tokens\n\"2026-11-29\",\"1\",2,3\n"))
	f.Fuzz(func(t *testing.T, anthropic bool, data []byte) {
		provider := usage.ProviderOpenAI
		if anthropic {
			provider = usage.ProviderAnthropic
		}
		rows, err := usage.ParseCSV(provider, bytes.NewReader(data))
		if err != nil {
			return
		}
		again, err := usage.ParseCSV(provider, bytes.NewReader(data))
		if err != nil || len(again) != len(rows) {
			t.Fatalf("second parse differs: %v", err)
		}
		for _, r := range usage.Aggregate(rows) {
			if _, err := time.Parse(time.DateOnly, r.Day); err != nil {
				t.Fatalf("day %q", r.Day)
			}
			if r.Provider != provider || r.InputTokens < 0 || r.OutputTokens < 0 || r.CacheReadTokens < 0 || r.CacheReadTokens > r.InputTokens {
				t.Fatalf("row breaks an invariant: %+v", r)
			}
			if (r.Requests == nil) != anthropic || (r.CacheWriteTokens == nil) == anthropic {
				t.Fatalf("requests/cache writes known where the report does not say them: %+v", r)
			}
		}
	})
}
