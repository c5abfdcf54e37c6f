package runs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/providers"
)

var store *ledger.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }

var auditor = access.Principal{User: "ana", Role: access.RoleAuditor, Tenants: []string{"acme"}}

// manager serves one stored call of tenant acme from a fake provider whose
// answers wait for release (nil: answer at once); each request that arrives
// is signalled on arrived.
func manager(t *testing.T, limits Limits, release <-chan struct{}) (*Manager, <-chan struct{}, replay.CallID) {
	t.Helper()
	var id [16]byte
	_, _ = rand.Read(id[:])
	call := replay.CallID{TraceID: hex.EncodeToString(id[:]), SpanID: "00f067aa0ba902b7"}
	arrived := make(chan struct{}, 100)
	if release == nil {
		open := make(chan struct{})
		close(open)
		release = open
	}
	fake, err := fakeprovider.New(fakeprovider.Config{Responder: func(ctx context.Context, req *fakeprovider.Request) (fakeprovider.Reply, error) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return fakeprovider.Reply{}, ctx.Err()
		}
		return fakeprovider.Deterministic(ctx, req)
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cfg := contentstore.NewDefaultConfig()
	cfg.Directory = configoptional.Some(contentstore.DirConfig{Path: filepath.Join(t.TempDir(), "content")})
	content, err := contentstore.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { content.Close() })
	put := func(kind, role, text string) string {
		b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]string{{"type": "text", "content": text}}}})
		res, err := content.Put(context.Background(), "acme", kind, b)
		if err != nil {
			t.Fatal(err)
		}
		return res.Ref.String()
	}
	now := time.Now().UTC()
	// Usage is recorded, so a replay's cost can be estimated within a budget.
	in, out := int64(1000), int64(200)
	if err := store.InsertCalls(context.Background(), []ledger.Call{{Tenant: "acme", TraceID: call.TraceID, SpanID: call.SpanID, StartTime: now, EndTime: now,
		Operation: "chat", InputTokens: &in, OutputTokens: &out, Provider: "openai", ResponseModel: "gpt-4o-mini-2024-07-18", InputRef: put("input", "user", "Is it raining?"),
		OutputRef: put("output", "assistant", "No."), ContentStatus: "stored", FinishReasons: []string{"stop"}, StopSequences: []string{},
		RequestParams: map[string]string{}, AttributeIssues: []string{}, IngestedAt: now}}); err != nil {
		t.Fatal(err)
	}
	client, err := providers.New(providers.Config{API: providers.ChatCompletions, BaseURL: srv.URL + "/v1", APIKey: "test"})
	if err != nil {
		t.Fatal(err)
	}
	prices, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(&replay.Runner{Ledger: store, Reader: &access.Reader{Content: content, Ledger: store},
		Clients: map[string]*providers.Client{"openai": client}, Prices: prices}, limits)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	return m, arrived, call
}

func wait(t *testing.T, m *Manager, id string) Status {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		st, ok := m.Get("ana", id)
		if !ok {
			t.Fatal("run not found")
		}
		if st.State != StateRunning {
			return st
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the run did not end")
	return Status{}
}

func TestRequestsAreBounded(t *testing.T) {
	m, _, call := manager(t, Limits{MaxN: 10, MaxCostUSD: "0.05"}, nil)
	for _, req := range []Request{
		{Call: call, N: 3, MaxCostUSD: "0.01"},                 // no reason
		{Call: call, N: 11, MaxCostUSD: "0.01", Reason: "why"}, // N over the limit
		{Call: call, N: 0, MaxCostUSD: "0.01", Reason: "why"},  // no replays
		{Call: call, N: 3, MaxCostUSD: "0.06", Reason: "why"},  // budget over the limit
		{Call: call, N: 3, MaxCostUSD: "", Reason: "why"},      // no budget
		{Call: call, N: 3, MaxCostUSD: "0", Reason: "why"},     // a zero budget
	} {
		if _, err := m.Start(auditor, "acme", req); !errors.Is(err, ErrInvalid) {
			t.Errorf("%+v: %v, want invalid", req, err)
		}
	}
	viewer := access.Principal{User: "vic", Role: access.RoleViewer, Tenants: []string{"acme"}}
	if _, err := m.Start(viewer, "acme", Request{Call: call, N: 3, MaxCostUSD: "0.01", Reason: "why"}); !errors.Is(err, access.ErrDenied) {
		t.Errorf("viewer: %v", err)
	}
	if _, err := m.Start(auditor, "globex", Request{Call: call, N: 3, MaxCostUSD: "0.01", Reason: "why"}); !errors.Is(err, access.ErrDenied) {
		t.Errorf("tenant not granted: %v", err)
	}
}

// One run per call; a cancelled run ends as cancelled with the replays it
// did recorded; others cannot see or cancel it.
func TestOneRunPerCallAndCancel(t *testing.T) {
	release := make(chan struct{})
	m, arrived, call := manager(t, Limits{}, release)
	st, err := m.Start(auditor, "acme", Request{Call: call, N: 5, MaxCostUSD: "0.10", Reason: "ticket 9"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Start(auditor, "acme", Request{Call: call, N: 5, MaxCostUSD: "0.10", Reason: "ticket 9"}); !errors.Is(err, ErrBusy) {
		t.Fatalf("second run of the call: %v, want busy", err)
	}
	if _, ok := m.Get("bob", st.ID); ok {
		t.Fatal("another user sees the run")
	}
	if _, ok := m.Cancel("bob", st.ID); ok {
		t.Fatal("another user cancels the run")
	}
	select { // the first replay is at the provider
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatalf("no replay reached the provider: %+v", wait(t, m, st.ID))
	}
	if _, ok := m.Cancel("ana", st.ID); !ok {
		t.Fatal("cancel: not found")
	}
	end := wait(t, m, st.ID)
	if end.State != StateCancelled || end.Result == nil || end.Result.Status != replay.StatusInterrupted {
		t.Fatalf("after cancel: %+v", end)
	}
	close(release)
	again, err := m.Start(auditor, "acme", Request{Call: call, N: 3, MaxCostUSD: "0.10", Reason: "ticket 9"})
	if err != nil {
		t.Fatalf("a new run after the first ended: %v", err)
	}
	done := wait(t, m, again.ID)
	if done.State != StateDone || done.Progress.Sent != 3 || done.Result == nil || done.Result.ExactMatchRate == nil {
		t.Fatalf("second run: %+v", done)
	}
}

// A run that takes longer than its time limit ends, with what it did.
func TestRunsAreTimeBounded(t *testing.T) {
	m, arrived, call := manager(t, Limits{Timeout: 2 * time.Second}, make(chan struct{}))
	st, err := m.Start(auditor, "acme", Request{Call: call, N: 5, MaxCostUSD: "0.10", Reason: "ticket 9"})
	if err != nil {
		t.Fatal(err)
	}
	<-arrived
	end := wait(t, m, st.ID)
	if end.State != StateFailed || end.Error == "" || end.EndedAt == nil || end.Result == nil || end.Result.Status != replay.StatusInterrupted {
		t.Fatalf("after the time limit: %+v", end)
	}
}
