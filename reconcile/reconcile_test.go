package reconcile_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/reconcile"
)

func hexID(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// answer is what a client read from the fake provider.
type answer struct {
	model                 string
	input, output, cached int64
}

func ask(t *testing.T, srv *httptest.Server, provider, key, model, prompt string) answer {
	t.Helper()
	var req *http.Request
	if provider == usage.ProviderAnthropic {
		req, _ = http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(
			fmt.Sprintf(`{"model":%q,"max_tokens":64,"messages":[{"role":"user","content":%q}]}`, model, prompt)))
		req.Header.Set("x-api-key", key)
		req.Header.Set("anthropic-version", "2023-06-01")
	} else {
		req, _ = http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(
			fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}]}`, model, prompt)))
		req.Header.Set("Authorization", "Bearer "+key)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Model string `json:"model"`
		Usage struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			Details          struct {
				Cached int64 `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			InputTokens   int64 `json:"input_tokens"`
			OutputTokens  int64 `json:"output_tokens"`
			CacheRead     int64 `json:"cache_read_input_tokens"`
			CacheCreation int64 `json:"cache_creation_input_tokens"`
		} `json:"usage"`
	}
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", model, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	u := body.Usage
	if provider == usage.ProviderAnthropic {
		return answer{body.Model, u.InputTokens + u.CacheRead + u.CacheCreation, u.OutputTokens, u.CacheRead}
	}
	return answer{body.Model, u.PromptTokens, u.CompletionTokens, u.Details.Cached}
}

// TestOnePercentMissing makes 1,000 calls per model and day through the
// fake provider over HTTP, writes 99% of them to the embedded ledger (every
// 100th is dropped, as an SDK under load drops spans), pulls both
// providers' usage reports from the fake's admin endpoints and reconciles:
// every cell must report the missing share within ±0.2 points of what was
// dropped. Redelivered rows and failed calls must not disturb it.
func TestOnePercentMissing(t *testing.T) {
	ctx := context.Background()
	day0 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	now := day0
	s, err := fakeprovider.New(fakeprovider.Config{})
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]fakeprovider.KeyInfo{"sk-a": {ID: "key_a", Project: "proj_1"}, "sk-b": {ID: "key_b", Project: "proj_1"},
		"sk-ant": {ID: "apikey_1", Project: "wrkspc_1"}}
	u, err := fakeprovider.NewUsage(s, fakeprovider.UsageConfig{AdminKey: "admin", Keys: keys, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(u)
	defer srv.Close()

	type model struct{ provider, name, key, service string }
	models := []model{
		{usage.ProviderOpenAI, "gpt-4o-mini", "sk-a", "checkout"},
		{usage.ProviderOpenAI, "gpt-4o", "sk-b", "support"},
		{usage.ProviderAnthropic, "claude-sonnet-4-0", "sk-ant", "support"},
	}
	const perCell = 1000
	type truth struct{ calls, dropped, tokens, droppedTokens int64 }
	want := map[string]*truth{}
	var calls, redelivered []ledger.Call
	for d := 0; d < 2; d++ {
		for _, m := range models {
			for i := 0; i < perCell; i++ {
				now = day0.AddDate(0, 0, d).Add(time.Duration(i) * time.Second)
				a := ask(t, srv, m.provider, m.key, m.name, fmt.Sprintf("question %d of day %d", i, d))
				k := fmt.Sprintf("%s|%s", now.Format(time.DateOnly), a.model)
				if want[k] == nil {
					want[k] = &truth{}
				}
				w := want[k]
				w.calls++
				w.tokens += a.input + a.output
				if i%100 == 50 {
					w.dropped++
					w.droppedTokens += a.input + a.output
					continue
				}
				c := ledger.Call{Tenant: "acme", TraceID: hexID(16), SpanID: hexID(8), ServiceName: m.service, SpanName: "chat " + m.name,
					StartTime: now, EndTime: now.Add(time.Second), Operation: "chat", Provider: m.provider, RequestModel: m.name,
					ResponseModel: a.model, InputTokens: &a.input, OutputTokens: &a.output, CacheReadTokens: &a.cached, Status: ledger.StatusOK,
					IngestedAt: now}
				calls = append(calls, c)
				if i < 20 {
					redelivered = append(redelivered, c)
				}
			}
			// A failed call reached the ledger but was never answered.
			calls = append(calls, ledger.Call{Tenant: "acme", TraceID: hexID(16), SpanID: hexID(8), ServiceName: m.service,
				StartTime: now, EndTime: now, Operation: "chat", Provider: m.provider, RequestModel: m.name, Status: ledger.StatusError,
				ErrorType: "429", IngestedAt: now})
		}
	}
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	if err := store.InsertCalls(ctx, redelivered); err != nil { // at-least-once delivery
		t.Fatal(err)
	}

	from, to := day0, day0.AddDate(0, 0, 2)
	for _, p := range []string{usage.ProviderOpenAI, usage.ProviderAnthropic} {
		c := usage.Client{Provider: p, BaseURL: srv.URL, AdminKey: "admin", HTTP: srv.Client()}
		rows, err := c.Pull(ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := usage.Save(ctx, store, usage.Import{Actor: "test", Source: usage.SourceAPI, Origin: c.Endpoints()[0], Provider: p,
			FromDay: from.Format(time.DateOnly), ToDay: to.Format(time.DateOnly)}, rows); err != nil {
			t.Fatal(err)
		}
	}

	for _, keyed := range []bool{false, true} {
		o := reconcile.Options{From: from, To: to}
		if keyed {
			o.Keys = map[string]map[string]string{usage.ProviderOpenAI: {"checkout": "key_a", "support": "key_b"}, usage.ProviderAnthropic: {"support": "apikey_1"}}
		}
		rep, err := reconcile.Reconcile(ctx, store, o)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, c := range rep.Cells {
			w := want[c.Day+"|"+c.Model]
			if w == nil && *c.Ledger.Requests == 0 && c.LedgerErrors == 1 && c.State == reconcile.StateOK {
				continue // the failed call: no response model, counted apart, never against the provider
			}
			if w == nil {
				t.Errorf("unexpected cell %+v", c)
				continue
			}
			seen++
			if c.State != reconcile.StateLedgerMissing {
				t.Errorf("%s %s: state %s, want %s", c.Day, c.Model, c.State, reconcile.StateLedgerMissing)
			}
			share := 100 * float64(w.dropped) / float64(w.calls)
			measure, reported := "requests", c.Drift.Requests
			if c.Provider == usage.ProviderAnthropic {
				// No request count: the missing share is the tokens'.
				share = 100 * float64(w.droppedTokens) / float64(w.tokens)
				measure = "tokens"
				in, out := *c.Ledger.InputTokens+*c.Ledger.OutputTokens, *c.Reported.InputTokens+*c.Reported.OutputTokens
				d := 100 * float64(in-out) / float64(out)
				reported = &d
				if c.Drift.Requests != nil || c.Reported.Requests != nil {
					t.Errorf("%s %s: a request count where Anthropic reports none", c.Day, c.Model)
				}
				if keyed && c.APIKeyID != "apikey_1" {
					t.Errorf("keyed cell %+v", c)
				}
			}
			if reported == nil || math.Abs(-*reported-share) > 0.2 || math.Abs(share-1) > 0.5 {
				t.Errorf("%s %s: reported missing %s share %v%%, dropped %.3f%%", c.Day, c.Model, measure, reported, share)
			}
			if keyed && c.Provider == usage.ProviderOpenAI && c.APIKeyID != map[string]string{"gpt-4o-mini-2024-07-18": "key_a", "gpt-4o-2024-08-06": "key_b"}[c.Model] {
				t.Errorf("keyed cell %s %s under key %q", c.Day, c.Model, c.APIKeyID)
			}
			t.Logf("%s %-26s key=%-8s %s missing: reported %.3f%%, dropped %.3f%%", c.Day, c.Model, c.APIKeyID, measure, -*reported, share)
		}
		if seen != len(want) {
			t.Errorf("keyed=%v: %d cells, want %d (%+v)", keyed, seen, len(want), rep.States)
		}
	}
}

// TestReimportReplacesAndUncoveredDays: a later import of a day is what is
// read (both stay stored), and a day no import covered is not_imported.
func TestReimportReplacesAndUncoveredDays(t *testing.T) {
	ctx := context.Background()
	day := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	in, out := int64(10), int64(5)
	var calls []ledger.Call
	for i := 0; i < 200; i++ {
		at := day.Add(time.Duration(i) * time.Minute)
		if i >= 100 {
			at = at.AddDate(0, 0, 1) // the second day has no report
		}
		calls = append(calls, ledger.Call{Tenant: "t2", TraceID: hexID(16), SpanID: hexID(8), ServiceName: "svc", StartTime: at, EndTime: at,
			Operation: "chat", Provider: usage.ProviderOpenAI, RequestModel: "m-reimport", ResponseModel: "m-reimport",
			InputTokens: &in, OutputTokens: &out, Status: ledger.StatusOK, IngestedAt: at})
	}
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	csv := func(requests int) string {
		return fmt.Sprintf("date,model,num_model_requests,input_tokens,output_tokens,input_cached_tokens\n2026-06-01,m-reimport,%d,%d,%d,0\n", requests, requests*10, requests*5)
	}
	for _, n := range []int{150, 100} {
		rows, err := usage.ParseCSV(usage.ProviderOpenAI, strings.NewReader(csv(n)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := usage.Save(ctx, store, usage.Import{Actor: "test", Source: usage.SourceFile, Origin: "usage.csv", Provider: usage.ProviderOpenAI}, rows); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Millisecond) // imports are ordered by their time
	}
	rep, err := reconcile.Reconcile(ctx, store, reconcile.Options{From: day, To: day.AddDate(0, 0, 2), Provider: usage.ProviderOpenAI})
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]string{}
	for _, c := range rep.Cells {
		if c.Model == "m-reimport" {
			states[c.Day] = c.State
		}
	}
	if states["2026-06-01"] != reconcile.StateOK || states["2026-06-02"] != reconcile.StateNotImported {
		t.Errorf("states %v: want the later import (100 requests) within tolerance and the uncovered day not imported", states)
	}
	if _, err := reconcile.Reconcile(ctx, store, reconcile.Options{From: day, To: day, Provider: usage.ProviderOpenAI}); err == nil {
		t.Error("an empty range was accepted")
	}
	if _, err := reconcile.Reconcile(ctx, store, reconcile.Options{From: day, To: day.AddDate(0, 0, 1), TolerancePercent: -1}); err == nil {
		t.Error("a negative tolerance was accepted")
	}
}
