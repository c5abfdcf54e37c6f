package retirement

import (
	"strings"
	"testing"
	"time"
)

// FuzzLookup feeds arbitrary names, including invalid UTF-8, NUL bytes and
// huge inputs: Lookup and Status never panic, and whatever they find is a
// real table entry of a platform the provider maps to.
func FuzzLookup(f *testing.F) {
	f.Add("aws.bedrock", "us.anthropic.claude-3-7-sonnet-20250219-v1:0")
	f.Add("openai", "ft:gpt-4-0613:acme::x")
	f.Add("gcp.gen_ai", "models/gemini-2.5-pro")
	f.Add("", "claude-2.1\x00\xff")
	tbl, err := Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, provider, model string) {
		e, ok := tbl.Lookup(provider, model)
		st := tbl.Status(provider, model, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
		if ok != (st.State != Unknown) {
			t.Fatalf("Lookup found=%v but Status %s", ok, st.State)
		}
		if !ok {
			return
		}
		mapped := platforms[strings.ToLower(strings.TrimSpace(provider))]
		found := false
		for _, p := range mapped {
			found = found || p == e.Provider
		}
		if !found || e.Model == "" || (e.Retired == nil && e.Announced == nil) {
			t.Fatalf("Lookup(%q, %q) = %+v", provider, model, e)
		}
	})
}
