package replay

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoretest"
	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/replay/distribution"
	"github.com/docketlabs/docket/replay/providers"
	"github.com/docketlabs/docket/replay/replaytest"
)

var ledgerStore *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &ledgerStore) }

const purpose = "ticket SUP-77: customer says the answer changed"

var (
	auditor = access.Principal{User: "ana", Role: access.RoleAuditor, Tenants: []string{"acme"}}
	// The lifecycle table's view of the day the tests are written for.
	testNow = func() time.Time { return time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC) }
)

// env is one test's fake provider (counting requests), content store and
// runner.
type env struct {
	t        *testing.T
	content  contentstore.Store
	runner   *Runner
	requests *atomic.Int64
}

func newEnv(t *testing.T, responder fakeprovider.Responder) *env {
	t.Helper()
	fake := replaytest.NewProvider(t, responder)
	e := &env{t: t, content: contentstoretest.Dir(t), requests: &fake.Requests}
	e.runner = &Runner{Ledger: ledgerStore, Reader: &access.Reader{Content: e.content, Ledger: ledgerStore},
		Retirements: replaytest.Retirements(t), Clients: fake.Clients(t), Prices: replaytest.Prices(t)}
	return e
}

func (e *env) put(kind, content string) string {
	e.t.Helper()
	return contentstoretest.Put(e.t, e.content, "acme", kind, []byte(content))
}

// call returns a ledger row of tenant acme whose input and output are stored.
func (e *env) call(traceID, spanID, provider, model, input, output string) ledger.Call {
	in, out := int64(1000), int64(1000)
	c := ledgertest.Call("acme", traceID, spanID)
	c.Provider, c.RequestModel, c.ResponseModel, c.InputTokens, c.OutputTokens = provider, model, model, &in, &out
	c.InputRef = contentstoretest.Put(e.t, e.content, "acme", "input", contentstoretest.Messages("user", input))
	c.OutputRef = contentstoretest.Put(e.t, e.content, "acme", "output", contentstoretest.Messages("assistant", output))
	c.ContentStatus, c.FinishReasons = "stored", []string{"stop"}
	return c
}

func insert(t *testing.T, calls ...ledger.Call) {
	t.Helper()
	if err := ledgerStore.InsertCalls(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
}

func only(t *testing.T, rep Report) Result {
	t.Helper()
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want 1", len(rep.Results))
	}
	return rep.Results[0]
}

func TestSampledDistributionIsMeasuredExactly(t *testing.T) {
	const original, alt1, alt2 = "The refund window is 30 days.", "The refund window is 14 days.", "Refunds are possible within 30 days."
	responder, err := fakeprovider.Sampled(7,
		fakeprovider.Output{Text: original, Weight: 7}, fakeprovider.Output{Text: alt1, Weight: 9}, fakeprovider.Output{Text: alt2, Weight: 4})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, responder)
	trace := ledgertest.TraceID(t)
	insert(t, e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "How long is the refund window?", original))

	rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 20, Purpose: purpose, Concurrency: 5, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	res := only(t, rep)
	if res.Status != StatusReplayed || res.Completed != 20 || res.Failed != 0 {
		t.Fatalf("status %s, completed %d, failed %d (%s)", res.Status, res.Completed, res.Failed, res.FirstError)
	}
	d := res.Distribution
	if d.ExactMatches != 7 || d.N != 20 {
		t.Fatalf("exact matches %d of %d, want 7 of 20", d.ExactMatches, d.N)
	}
	if len(d.Variants) != 3 || d.Variants[0].Text != alt1 || d.Variants[0].Count != 9 || d.Variants[1].Count != 7 || d.Variants[2].Count != 4 {
		t.Fatalf("variants %+v", d.Variants)
	}
	if got := e.requests.Load(); got != 20 || rep.Requests != 20 || rep.Replays != 20 {
		t.Fatalf("fake saw %d requests, report says %d requests / %d replays; want 20", got, rep.Requests, rep.Replays)
	}

	// Every read is on record with the run's purpose.
	log, err := ledgerStore.AccessLog(context.Background(), ledgerstore.AccessFilter{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	reveals, runs := 0, 0
	for _, entry := range log {
		if entry.TraceID == trace && entry.Outcome == access.OutcomeAllowed && entry.Reason == purpose && entry.Actor == "ana" {
			switch entry.Action {
			case "reveal":
				reveals++
			case ActionReplay:
				runs++
				if !strings.Contains(entry.Detail, "run="+rep.RunID+" n=20") {
					t.Errorf("run entry detail %q", entry.Detail)
				}
			}
		}
	}
	if reveals != 2 || runs != 1 { // input and original output; the run
		t.Fatalf("%d recorded reveals and %d runs, want 2 and 1", reveals, runs)
	}

	// The ledger keeps the result, linked to the call, without output text.
	recs, err := Records(context.Background(), e.runner.Ledger, trace)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	rec := recs[0]
	if rec.RunID != rep.RunID || rec.SpanID != "00f067aa0ba902b7" || rec.Tenant != "acme" || rec.Status != StatusReplayed ||
		rec.ExactMatches == nil || *rec.ExactMatches != 7 || rec.Completed != 20 || rec.Purpose != purpose {
		t.Fatalf("record %+v", rec)
	}
	for _, text := range []string{original, alt1, alt2, "refund"} {
		if strings.Contains(rec.Report, text) {
			t.Fatalf("recorded summary contains output text %q", text)
		}
	}
	var s Summary
	if err := json.Unmarshal([]byte(rec.Report), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Variants) != 3 || s.Variants[1].Count != 7 || !s.Variants[1].Matches || s.ExactMatchRate == nil || *s.ExactMatchRate != 0.35 {
		t.Fatalf("summary %+v", s)
	}

	// Each replay is itself a call in the ledger: one trace per run, every
	// row naming the call it replays.
	replays, err := ledgerStore.CallsByTrace(context.Background(), rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if len(replays) != 20 {
		t.Fatalf("%d replay calls in the ledger, want 20", len(replays))
	}
	spans := map[string]bool{}
	for _, c := range replays {
		spans[c.SpanID] = true
		if c.Tenant != "acme" || c.ServiceName != replayService || c.ResponseModel != "gpt-4o-mini-2024-07-18" || c.Status != ledger.StatusOK ||
			c.RequestParams[paramOfTraceID] != trace || c.RequestParams[paramOfSpanID] != "00f067aa0ba902b7" || c.RequestParams[paramRunID] != rep.RunID ||
			c.InputTokens == nil || c.OutputTokens == nil || c.ContentStatus != replayContentState {
			t.Fatalf("replay call row %+v", c)
		}
	}
	if len(spans) != 20 {
		t.Fatalf("%d distinct replay span IDs, want 20", len(spans))
	}
}

func TestRetiredModelIsNeverCalledAndAnnouncedIsFlagged(t *testing.T) {
	e := newEnv(t, nil)
	trace := ledgertest.TraceID(t)
	// Shipped table: claude-3-5-haiku-20241022 retired on 2026-02-19;
	// claude-sonnet-4-5-20250929 announced, retires on 2026-11-30.
	insert(t,
		e.call(trace, "1111111111111111", "anthropic", "claude-3-5-haiku-20241022", "Summarise the contract.", "It is a lease."),
		e.call(trace, "2222222222222222", "anthropic", "claude-sonnet-4-5-20250929", "Summarise the memo.", "It is a memo."))

	rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 3, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 2 {
		t.Fatalf("%d results", len(rep.Results))
	}
	bySpan := map[string]Result{}
	for _, r := range rep.Results {
		bySpan[r.SpanID] = r
	}
	retired, announced := bySpan["1111111111111111"], bySpan["2222222222222222"]
	if retired.Status != StatusIrreproducible || retired.Reason != "irreproducible: model retired on 2026-02-19" || retired.Requests != 0 {
		t.Fatalf("retired: %+v", retired)
	}
	if announced.Status != StatusReplayed || announced.Lifecycle != "announced, retires on 2026-11-30" || announced.Completed != 3 {
		t.Fatalf("announced: %+v", announced)
	}
	if got := e.requests.Load(); got != 3 {
		t.Fatalf("fake saw %d requests, want 3 (none for the retired model)", got)
	}
}

func TestBudgetStopsAtMaxCalls(t *testing.T) {
	e := newEnv(t, nil)
	trace := ledgertest.TraceID(t)
	insert(t, e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "Budget question", "Budget answer"))

	rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 20, MaxCalls: 5, Concurrency: 3, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	res := only(t, rep)
	if res.Status != StatusBudgetExhausted || res.Completed != 5 || res.Reason != "budget exhausted after 5 of 20 replays" {
		t.Fatalf("%+v", res)
	}
	if got := e.requests.Load(); got != 5 {
		t.Fatalf("fake saw %d requests, want 5", got)
	}
	if res.Distribution == nil || res.Distribution.N != 5 {
		t.Fatalf("distribution of the replays done: %+v", res.Distribution)
	}
}

func TestBudgetStopsAtMaxCost(t *testing.T) {
	e := newEnv(t, nil)
	trace := ledgertest.TraceID(t)
	c := e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "Cost question", "Cost answer")
	insert(t, c)
	est := e.runner.Prices.Cost(c.Provider, c.ResponseModel, c.Operation, testNow(), pricing.Usage{Input: c.InputTokens, Output: c.OutputTokens})
	if est.USD == nil || *est.USD <= 0 {
		t.Fatalf("the shipped prices should price %s: %+v", c.ResponseModel, est)
	}
	capUSD := (4**est.USD + *est.USD/2).String() // room for 4.5 replays

	rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 20, MaxCostUSD: capUSD, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	res := only(t, rep)
	if res.Status != StatusBudgetExhausted || res.Completed != 4 || e.requests.Load() != 4 || res.EstimatedCostPerReplay != est.Display() {
		t.Fatalf("%+v; fake saw %d requests", res, e.requests.Load())
	}

	// Under a cost cap, a call whose cost is unknown is not sent at all.
	trace2 := ledgertest.TraceID(t)
	unpriced := e.call(trace2, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "Cost question", "Cost answer")
	unpriced.InputTokens, unpriced.OutputTokens = nil, nil
	insert(t, unpriced)
	rep, err = e.runner.ReplayTrace(context.Background(), auditor, trace2, Options{N: 20, MaxCostUSD: "1", Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	if res := only(t, rep); res.Status != StatusBudgetExhausted || res.Completed != 0 || e.requests.Load() != 4 ||
		!strings.Contains(res.Reason, "missing_usage") || res.EstimatedCostPerReplay != "—" {
		t.Fatalf("%+v", res)
	}
}

func TestRejectedParameterIsDroppedAndRecorded(t *testing.T) {
	responder, err := fakeprovider.RejectParams(fakeprovider.Deterministic, "temperature")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, responder)
	trace := ledgertest.TraceID(t)
	c := e.call(trace, "00f067aa0ba902b7", "openai", "gpt-5-2025-08-07", "Parameter question", "Parameter answer")
	temp := 0.7
	c.Temperature = &temp
	insert(t, c)

	rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 5, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	res := only(t, rep)
	if res.Status != StatusReplayed || res.Completed != 5 {
		t.Fatalf("%+v", res)
	}
	if len(res.ParamChanges) != 1 || res.ParamChanges[0].Param != providers.ParamTemperature ||
		res.ParamChanges[0].Action != providers.ChangeDropped || res.ParamChanges[0].Recorded != "0.7" {
		t.Fatalf("param changes %+v", res.ParamChanges)
	}
	// The first replay learns of the rejection (two requests); the others
	// are sent without the parameter.
	if got := e.requests.Load(); got != 6 || res.Requests != 6 {
		t.Fatalf("fake saw %d requests, result says %d; want 6", got, res.Requests)
	}
	recs, err := Records(context.Background(), e.runner.Ledger, trace)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records %v, %v", recs, err)
	}
	var s Summary
	if err := json.Unmarshal([]byte(recs[0].Report), &s); err != nil {
		t.Fatal(err)
	}
	if len(s.ParamChanges) != 1 || s.ParamChanges[0].Param != "temperature" || s.ParamChanges[0].Action != "dropped" {
		t.Fatalf("recorded param changes %+v", s.ParamChanges)
	}
}

func TestMissingContentIsIrreproducible(t *testing.T) {
	e := newEnv(t, nil)
	trace := ledgertest.TraceID(t)
	notStored := e.call(trace, "1111111111111111", "openai", "gpt-4o-mini-2024-07-18", "q1", "a1")
	notStored.InputRef, notStored.ContentStatus = "", "omitted"
	deleted := e.call(trace, "2222222222222222", "openai", "gpt-4o-mini-2024-07-18", "q2", "a2")
	ref, err := contentstore.ParseRef(deleted.InputRef)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.content.Delete(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	insert(t, notStored, deleted)

	rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 3, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"1111111111111111": "irreproducible: input not retained (omitted)",
		"2222222222222222": "irreproducible: input not retained (deleted from the content store)",
	}
	for _, r := range rep.Results {
		if r.Status != StatusIrreproducible || r.Reason != want[r.SpanID] {
			t.Errorf("%s: %s %q, want %q", r.SpanID, r.Status, r.Reason, want[r.SpanID])
		}
	}
	if len(rep.Results) != 2 || e.requests.Load() != 0 {
		t.Fatalf("%d results, %d requests", len(rep.Results), e.requests.Load())
	}
}

// TestOpenLLMetryCallReplays: an OpenLLMetry call's content is stored as
// the content processor stores flattened attributes (one JSON object); the
// replay sends its messages and compares against its completion.
func TestOpenLLMetryCallReplays(t *testing.T) {
	var mu sync.Mutex
	var seen [][]fakeprovider.Message
	e := newEnv(t, func(ctx context.Context, req *fakeprovider.Request) (fakeprovider.Reply, error) {
		mu.Lock()
		seen = append(seen, req.Messages)
		mu.Unlock()
		return fakeprovider.Reply{Text: "It shipped on Monday."}, nil
	})
	trace := ledgertest.TraceID(t)
	c := e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "", "")
	c.InputRef = e.put("prompt", `{"gen_ai.prompt.0.role":"system","gen_ai.prompt.0.content":"Be brief.",`+
		`"gen_ai.prompt.1.role":"user","gen_ai.prompt.1.content":"Where is order 42?"}`)
	c.OutputRef = e.put("completion", `{"gen_ai.completion.0.role":"assistant","gen_ai.completion.0.content":"It shipped on Monday.",`+
		`"gen_ai.completion.0.finish_reason":"stop"}`)
	insert(t, c)

	rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 2, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	res := only(t, rep)
	if res.Status != StatusReplayed || res.Completed != 2 || res.Distribution == nil || res.Distribution.ExactMatches != 2 {
		t.Fatalf("%+v", res)
	}
	want := []fakeprovider.Message{{Role: "system", Text: "Be brief."}, {Role: "user", Text: "Where is order 42?"}}
	for _, msgs := range seen {
		if !slices.Equal(msgs, want) {
			t.Fatalf("provider saw %+v, want %+v", msgs, want)
		}
	}
}

func TestViewerIsDeniedAndNothingIsSent(t *testing.T) {
	e := newEnv(t, nil)
	trace := ledgertest.TraceID(t)
	insert(t, e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "Viewer question", "Viewer answer"))
	viewer := access.Principal{User: "vic", Role: access.RoleViewer, Tenants: []string{"acme"}}

	_, err := e.runner.ReplayTrace(context.Background(), viewer, trace, Options{N: 3, Purpose: purpose, Now: testNow})
	if !errors.Is(err, access.ErrDenied) {
		t.Fatalf("got %v, want a denial", err)
	}
	if e.requests.Load() != 0 {
		t.Fatalf("fake saw %d requests", e.requests.Load())
	}
	log, err := ledgerStore.AccessLog(context.Background(), ledgerstore.AccessFilter{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	denied := false
	for _, entry := range log {
		denied = denied || entry.TraceID == trace && entry.Actor == "vic" && entry.Outcome == access.OutcomeDenied && entry.Detail == access.DetailRole
	}
	if !denied {
		t.Fatal("the denied reveal is not in the access log")
	}
	if recs, err := Records(context.Background(), e.runner.Ledger, trace); err != nil || len(recs) != 0 {
		t.Fatalf("records after a denied run: %v, %v", recs, err)
	}
}

func TestOptionsAreChecked(t *testing.T) {
	e := newEnv(t, nil)
	trace := ledgertest.TraceID(t)
	insert(t, e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "Options question", "Options answer"))
	for _, opt := range []Options{
		{Purpose: "  "},
		{Purpose: purpose, N: -1},
		{Purpose: purpose, N: MaxN + 1},
		{Purpose: purpose, MaxCostUSD: "-1"},
		{Purpose: purpose, MaxCostUSD: "1e3"},
		{Purpose: purpose, MaxCostUSD: "0.0000000000001"},
		{Purpose: purpose, MaxCostUSD: "ten"},
	} {
		if _, err := e.runner.ReplayTrace(context.Background(), auditor, trace, opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
	if _, err := e.runner.ReplayTrace(context.Background(), auditor, "not-a-trace", Options{Purpose: purpose}); err == nil {
		t.Error("bad trace ID: no error")
	}
	if e.requests.Load() != 0 {
		t.Fatalf("fake saw %d requests", e.requests.Load())
	}
}

func TestParseUSD(t *testing.T) {
	for in, want := range map[string]pricing.PicoUSD{"0": 0, "0.5": 500_000_000_000, "12": 12_000_000_000_000, "0.000000000001": 1} {
		got, err := ParseUSD(in)
		if err != nil || got != want {
			t.Errorf("ParseUSD(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestFailedFirstReplayStopsTheCall(t *testing.T) {
	e := newEnv(t, nil)
	trace := ledgertest.TraceID(t)
	const secret = "my card is 4111 1111 1111 1111"
	// A snapshot the provider does not serve: a 404, not retried.
	insert(t, e.call(trace, "00f067aa0ba902b7", "openai", "acme-llm-1", secret, "ok"))

	rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 20, Purpose: purpose, Now: testNow})
	if err != nil {
		t.Fatal(err)
	}
	res := only(t, rep)
	if res.Status != StatusFailed || res.Failed != 1 || res.Completed != 0 || res.Requests != 1 || e.requests.Load() != 1 || res.Distribution != nil {
		t.Fatalf("%+v; fake saw %d requests", res, e.requests.Load())
	}
	if res.FirstError == "" || strings.Contains(res.FirstError, "4111") {
		t.Fatalf("first error %q", res.FirstError)
	}
}

// Where the provider sends the tokens it sampled, divergence in tokens is
// counted in them; otherwise in the model's tokenizer (gpt-4o-mini:
// o200k_base).
func TestSampledTokensArePreferredToTheTokenizer(t *testing.T) {
	const original, alt = "The refund window is 30 days.", "The refund window is 14 days."
	responder, err := fakeprovider.Sampled(3, fakeprovider.Output{Text: alt, Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sampled       bool
		from          string
		token, tokens int
	}{
		// The fake's own split: The| refund| window| is| 14| days|.
		{true, distribution.SampledSource, 4, 7},
		// o200k_base: The| refund| window| is| |14| days|.
		{false, "o200k_base", 5, 8},
	} {
		e := newEnv(t, responder)
		e.runner.SampledTokens = c.sampled
		trace := ledgertest.TraceID(t)
		insert(t, e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "How long is the refund window?", original))
		rep, err := e.runner.ReplayTrace(context.Background(), auditor, trace, Options{N: 2, Purpose: purpose, Now: testNow})
		if err != nil {
			t.Fatal(err)
		}
		d := only(t, rep).Distribution.Variants[0].Divergence
		if d == nil || d.Char != 21 || d.TokensFrom != c.from || d.Token == nil || *d.Token != c.token || *d.Tokens != c.tokens {
			t.Errorf("sampled=%v: %+v, want token %d of %d from %s", c.sampled, d, c.token, c.tokens, c.from)
			if d != nil && d.Token != nil {
				t.Logf("token %d of %d", *d.Token, *d.Tokens)
			}
		}
	}
}
