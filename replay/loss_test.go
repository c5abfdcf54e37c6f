package replay

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage"
)

// replayRows counts the ledger rows of replays of trace, read from the
// table itself so that the count does not depend on the run's report.
func replayRows(t *testing.T, trace string) (ok, failed int) {
	t.Helper()
	type row struct {
		Status string `json:"status"`
	}
	rows, err := storage.QueryRows[row](context.Background(), ledgerStore.Engine(),
		"SELECT status FROM llm_calls WHERE request_params[{key:String}] = {trace:String}",
		map[string]any{"key": paramOfTraceID, "trace": trace})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Status == "ok" {
			ok++
		} else {
			failed++
		}
	}
	return ok, failed
}

// A run that ends part-way (cancelled, timed out) keeps what it paid for:
// the provider fails the 4th request and the run is cancelled then, as an
// auditor's cancel or the run's time bound would. The three replays
// answered before are in the ledger, the failed one is recorded as failed,
// and the call's result is recorded as interrupted.
func TestInterruptedRunKeepsTheReplaysAlreadyPaidFor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var n atomic.Int64
	e := newEnv(t, func(ctx context.Context, req *fakeprovider.Request) (fakeprovider.Reply, error) {
		if n.Add(1) == 4 {
			cancel()
			return fakeprovider.Reply{}, fakeprovider.ServerError()
		}
		return fakeprovider.Deterministic(ctx, req)
	})
	trace := ledgertest.TraceID(t)
	insert(t, e.call(trace, "00f067aa0ba902b7", "openai", "gpt-4o-mini-2024-07-18", "Where is my parcel?", "It ships today."))

	rep, err := e.runner.ReplayTrace(ctx, auditor, trace, Options{N: 8, Purpose: purpose, Concurrency: 1, Now: testNow})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the run to end cancelled", err)
	}
	if got := e.requests.Load(); got != 4 {
		t.Fatalf("fake saw %d requests, want 4", got)
	}
	ok, failed := replayRows(t, trace)
	if ok != 3 || failed != 1 {
		t.Fatalf("ledger has %d answered and %d failed replay rows after 4 provider requests; want 3 and 1", ok, failed)
	}
	recs, rerr := Records(context.Background(), e.runner.Ledger, trace)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(recs) != 1 || recs[0].Status != StatusInterrupted || recs[0].Completed != 3 || recs[0].RunID != rep.RunID {
		t.Fatalf("records %+v (run %q), want one interrupted result with 3 completed", recs, rep.RunID)
	}
}
