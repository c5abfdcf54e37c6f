package pricing

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

var benchCalls = []struct{ provider, model string }{
	{"openai", "gpt-4o-2024-08-06"},
	{"anthropic", "claude-sonnet-4-6"},
	{"aws.bedrock", "us.anthropic.claude-sonnet-4-6"},
	{"gcp.vertex_ai", "gemini-2.5-pro"},
	{"azure.ai.openai", "gpt-4o"},
	{"openrouter", "x-ai/grok-4.3"},
	{"deepseek", "deepseek-chat"},
	{"openai", "gpt-nonexistent"},
}

func benchUsage() Usage {
	in, out, cr, rs := int64(12_000), int64(800), int64(4_000), int64(200)
	return Usage{Input: &in, Output: &out, CacheRead: &cr, Reasoning: &rs}
}

func loadForBench(b *testing.B) *Table {
	tbl, err := Load(bytes.NewReader(embeddedTable))
	if err != nil {
		b.Fatal(err)
	}
	return tbl
}

// BenchmarkCost is the per-span path: cached lookup, period choice, exact
// arithmetic.
func BenchmarkCost(b *testing.B) {
	tbl := loadForBench(b)
	u, when := benchUsage(), time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		c := benchCalls[i%len(benchCalls)]
		tbl.Cost(c.provider, c.model, "chat", when, u)
	}
}

func BenchmarkCostParallel(b *testing.B) {
	tbl := loadForBench(b)
	u, when := benchUsage(), time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for i := 0; pb.Next(); i++ {
			c := benchCalls[i%len(benchCalls)]
			tbl.Cost(c.provider, c.model, "chat", when, u)
		}
	})
}

// BenchmarkMatch is what the cache saves: matching a name against the
// table's rules. Unknown models are the worst case (every rule of the
// provider and its fallbacks is tried).
func BenchmarkMatch(b *testing.B) {
	tbl := loadForBench(b)
	for _, c := range []struct{ name, provider, model string }{
		{"openai-first-entries", "openai", "gpt-4o"},
		{"openrouter-last-entry", "openrouter", "~openai/gpt-mini-latest"},
		{"azure-fallback", "azure.ai.openai", "gpt-4o"},
		{"unknown-openrouter", "openrouter", "vendor/model-that-does-not-exist"},
		{"no-provider", "", "claude-3-5-haiku-20241022"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tbl.match(c.provider, c.model)
			}
		})
	}
}

// BenchmarkCostUniqueModels defeats the cache: every call has a new name.
func BenchmarkCostUniqueModels(b *testing.B) {
	tbl := loadForBench(b)
	u, when := benchUsage(), time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	names := make([]string, 100_000)
	for i := range names {
		names[i] = fmt.Sprintf("gpt-4o-custom-%d", i)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		tbl.Cost("openai", names[i%len(names)], "chat", when, u)
	}
}

func BenchmarkLoadDefault(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(embeddedTable)))
	for b.Loop() {
		if _, err := Load(bytes.NewReader(embeddedTable)); err != nil {
			b.Fatal(err)
		}
	}
}
