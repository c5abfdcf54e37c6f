// Package replaytest gives replay tests the parts a runner is built from:
// a fake provider speaking the real wire formats and counting requests,
// clients of it, and the shipped retirement and price tables.
package replaytest

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/replay/providers"
	"github.com/docketlabs/docket/replay/retirement"
)

// Provider is a fake provider served for one test.
type Provider struct {
	URL string
	// Requests counts the requests that arrived.
	Requests atomic.Int64
}

// NewProvider serves responder until the test ends.
func NewProvider(t testing.TB, responder fakeprovider.Responder) *Provider {
	t.Helper()
	fake, err := fakeprovider.New(fakeprovider.Config{Responder: responder})
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.Requests.Add(1)
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.URL = srv.URL
	return p
}

// Clients are an OpenAI Chat Completions and an Anthropic Messages client of
// p, by gen_ai.provider.name.
func (p *Provider) Clients(t testing.TB) map[string]*providers.Client {
	t.Helper()
	openai, err := providers.New(providers.Config{API: providers.ChatCompletions, BaseURL: p.URL + "/v1", APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	anthropic, err := providers.New(providers.Config{API: providers.Messages, BaseURL: p.URL, APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return map[string]*providers.Client{"openai": openai, "anthropic": anthropic}
}

// Retirements is the shipped model-retirement table.
func Retirements(t testing.TB) *retirement.Table {
	t.Helper()
	tbl, err := retirement.Default()
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// Prices is the shipped price table.
func Prices(t testing.TB) *pricing.Table {
	t.Helper()
	tbl, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}
