package pricing

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLookupCacheIsBounded(t *testing.T) {
	tbl, err := Load(strings.NewReader(string(embeddedTable)))
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 * maxCacheEntries {
		tbl.Lookup("openai", fmt.Sprintf("gpt-unknown-%d", i), when)
		if n := len(tbl.cache.m); n > maxCacheEntries {
			t.Fatalf("cache holds %d entries, bound is %d", n, maxCacheEntries)
		}
	}
	// After the cache started over, answers are unchanged.
	p, ok := tbl.Lookup("openai", "gpt-4o", when)
	if !ok || p.Ref != "genai-prices:openai/gpt-4o" {
		t.Fatalf("after eviction: %q %v", p.Ref, ok)
	}
	p, ok = tbl.Lookup("openai", "gpt-4o", when)
	if !ok || p.Ref != "genai-prices:openai/gpt-4o" {
		t.Fatalf("cached: %q %v", p.Ref, ok)
	}
	if _, cached := tbl.cache.get(cacheKey{"openai", "gpt-4o"}); !cached {
		t.Error("hit was not cached")
	}
	// Misses are cached too, as nil.
	tbl.Lookup("openai", "gpt-nonexistent", when)
	if m, cached := tbl.cache.get(cacheKey{"openai", "gpt-nonexistent"}); !cached || m != nil {
		t.Errorf("miss cached as %v, %v", m, cached)
	}
}

func TestOverlongNamesAreUnknownAndNotCached(t *testing.T) {
	tbl, err := Load(strings.NewReader(string(embeddedTable)))
	if err != nil {
		t.Fatal(err)
	}
	long := "gpt-4o" + strings.Repeat("x", maxModelLen)
	if _, ok := tbl.Lookup("openai", long, time.Now()); ok {
		t.Error("overlong model matched")
	}
	if _, ok := tbl.Lookup(strings.Repeat("openai", 30), "gpt-4o", time.Now()); ok {
		t.Error("overlong provider matched")
	}
	if len(tbl.cache.m) != 0 {
		t.Errorf("cache has %d entries", len(tbl.cache.m))
	}
}

// Run with -race: the cache is shared by every span the ledger prices.
func TestConcurrentCost(t *testing.T) {
	tbl, err := Load(strings.NewReader(string(embeddedTable)))
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	in, out := int64(1000), int64(1000)
	u := Usage{Input: &in, Output: &out}
	models := []struct{ provider, model string }{
		{"openai", "gpt-4o"}, {"anthropic", "claude-3-5-haiku-20241022"}, {"gcp.gemini", "gemini-2.5-pro"},
		{"openai", "gpt-nonexistent"}, {"aws.bedrock", "us.anthropic.claude-sonnet-4-6"},
	}
	want := make([]string, len(models))
	for i, m := range models {
		want[i] = tbl.Cost(m.provider, m.model, "chat", when, u).String()
	}
	tbl.cache = lookupCache{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				k := (g + i) % len(models)
				if got := tbl.Cost(models[k].provider, models[k].model, "chat", when, u).String(); got != want[k] {
					t.Errorf("%v: %q, want %q", models[k], got, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
}
