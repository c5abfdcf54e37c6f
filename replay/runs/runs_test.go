package runs

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/docketlabs/docket/contentstore/contentstoretest"
	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/replaytest"
)

var store *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }

var auditor = access.Principal{User: "ana", Role: access.RoleAuditor, Tenants: []string{"acme"}}

// manager serves one stored call of tenant acme from a fake provider whose
// answers wait for release (nil: answer at once); each request that arrives
// is signalled on arrived.
func manager(t *testing.T, limits Limits, release <-chan struct{}) (*Manager, <-chan struct{}, replay.CallID) {
	t.Helper()
	call := replay.CallID{TraceID: ledgertest.TraceID(t), SpanID: "00f067aa0ba902b7"}
	arrived := make(chan struct{}, 100)
	if release == nil {
		open := make(chan struct{})
		close(open)
		release = open
	}
	fake := replaytest.NewProvider(t, func(ctx context.Context, req *fakeprovider.Request) (fakeprovider.Reply, error) {
		arrived <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return fakeprovider.Reply{}, ctx.Err()
		}
		return fakeprovider.Deterministic(ctx, req)
	})
	content := contentstoretest.Dir(t)
	// Usage is recorded, so a replay's cost can be estimated within a budget.
	in, out := int64(1000), int64(200)
	c := ledgertest.Call("acme", call.TraceID, call.SpanID)
	c.InputTokens, c.OutputTokens, c.Provider, c.ResponseModel = &in, &out, "openai", "gpt-4o-mini-2024-07-18"
	c.InputRef = contentstoretest.Put(t, content, "acme", "input", contentstoretest.Messages("user", "Is it raining?"))
	c.OutputRef = contentstoretest.Put(t, content, "acme", "output", contentstoretest.Messages("assistant", "No."))
	c.ContentStatus, c.FinishReasons = "stored", []string{"stop"}
	if err := store.InsertCalls(context.Background(), []ledger.Call{c}); err != nil {
		t.Fatal(err)
	}
	m, err := New(&replay.Runner{Ledger: store, Reader: &access.Reader{Content: content, Ledger: store},
		Clients: fake.Clients(t), Prices: replaytest.Prices(t)}, limits)
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
	// Bounded: on a loaded machine the time limit can pass before the first
	// request is sent, and an unbounded receive then hangs the package.
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		t.Fatalf("no replay reached the provider: %+v", wait(t, m, st.ID))
	}
	end := wait(t, m, st.ID)
	if end.State != StateFailed || end.Error == "" || end.EndedAt == nil || end.Result == nil || end.Result.Status != replay.StatusInterrupted {
		t.Fatalf("after the time limit: %+v", end)
	}
}
