package pricing_test

import (
	"bytes"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/pricing"
)

// checkCost asserts what must hold for any Cost.
func checkCost(t *testing.T, c pricing.Cost) {
	t.Helper()
	switch c.Status {
	case pricing.StatusOK:
		if c.USD == nil || *c.USD < 0 || *c.USD > pricing.MaxCost {
			t.Fatalf("ok with USD %v", c.USD)
		}
		if c.PriceRef == "" {
			t.Fatal("ok without a price reference")
		}
	case pricing.StatusUnknownModel, pricing.StatusMissingUsage, pricing.StatusInvalidUsage:
		if c.USD != nil || c.Display() != "—" {
			t.Fatalf("%s with USD %v", c.Status, c.USD)
		}
	default:
		t.Fatalf("unexpected status %q", c.Status)
	}
}

// Seed corpus: testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		tbl, err := pricing.Load(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "pricing: load table: ") {
				t.Fatalf("unwrapped error %q", err)
			}
			return
		}
		in, out := int64(300), int64(20)
		for _, provider := range []string{"", "openai", "azure.ai.openai", "p"} {
			for _, model := range []string{"gpt-4o", "m", "tiered-1", "a/b"} {
				checkCost(t, tbl.Cost(provider, model, "chat", time.Unix(1_700_000_000, 0), pricing.Usage{Input: &in, Output: &out}))
			}
		}
	})
}

// FuzzCost checks Cost against an independent big-integer computation from
// the rates Lookup reports, and that a cached answer equals the first one.
// Seed corpus: testdata/fuzz/FuzzCost.
func FuzzCost(f *testing.F) {
	tbl, err := pricing.Default()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, provider, model string, in, out, cacheRead, cacheWrite, reasoning, unix int64, embeddings bool) {
		op := "chat"
		if embeddings {
			op = pricing.OperationEmbeddings
		}
		when := time.Unix(unix%(400*365*86400), 0)
		u := pricing.Usage{Input: &in, Output: &out, CacheRead: &cacheRead, CacheWrite: &cacheWrite, Reasoning: &reasoning}
		c := tbl.Cost(provider, model, op, when, u)
		checkCost(t, c)
		again := tbl.Cost(provider, model, op, when, u)
		if again.Status != c.Status || again.PriceRef != c.PriceRef || again.String() != c.String() {
			t.Fatalf("second call differs: %+v vs %+v", again, c)
		}
		if in < 0 || out < 0 || cacheRead < 0 || cacheWrite < 0 || reasoning < 0 ||
			cacheRead > in || cacheWrite > in-cacheRead || reasoning > out {
			if c.Status != pricing.StatusInvalidUsage {
				t.Fatalf("bad usage got %s", c.Status)
			}
			return
		}
		price, ok := tbl.Lookup(provider, model, when)
		if !ok {
			if c.Status != pricing.StatusUnknownModel || c.PriceRef != "" {
				t.Fatalf("no entry but %s %q", c.Status, c.PriceRef)
			}
			return
		}
		r := price.RatesFor(in)
		or := func(a, b pricing.Rate) pricing.Rate {
			if a.Known() {
				return a
			}
			return b
		}
		want, unpriced := new(big.Int), false
		for _, term := range []struct {
			tokens int64
			rate   pricing.Rate
		}{
			{in - cacheRead - cacheWrite, r.Input}, {cacheRead, or(r.CacheRead, r.Input)}, {cacheWrite, or(r.CacheWrite, r.Input)},
			{out - reasoning, r.Output}, {reasoning, or(r.Reasoning, r.Output)},
		} {
			if term.tokens == 0 {
				continue
			}
			if !term.rate.Known() {
				unpriced = true
				continue
			}
			want.Add(want, new(big.Int).Mul(big.NewInt(term.tokens), big.NewInt(int64(term.rate.PerUnit()))))
		}
		if r.Request.Known() {
			want.Add(want, big.NewInt(int64(r.Request.PerUnit())))
		}
		switch {
		case want.Cmp(big.NewInt(int64(pricing.MaxCost))) > 0:
			if c.Status != pricing.StatusInvalidUsage {
				t.Fatalf("cost %s beyond MaxCost but %s", want, c.Status)
			}
		case unpriced:
			if c.Status != pricing.StatusUnknownModel || c.PriceRef != price.Ref {
				t.Fatalf("unpriced tokens but %s %q", c.Status, c.PriceRef)
			}
		default:
			if c.Status != pricing.StatusOK || int64(*c.USD) != want.Int64() {
				t.Fatalf("cost %s %v, want %s", c.Status, c.USD, want)
			}
		}
	})
}
