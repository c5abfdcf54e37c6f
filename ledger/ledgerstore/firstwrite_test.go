package ledgerstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
)

// Two queue consumers insert batches concurrently, each row version twice
// (an at-least-once redelivery) and in random order: every key shows its
// first ingest, and each later version is one conflict.
func TestFirstIngestWinsUnderConcurrentBatches(t *testing.T) {
	ctx := context.Background()
	const keys, versions = 50, 3
	trace := fmt.Sprintf("%032x", rand.Uint64())
	base := time.Now().UTC().Truncate(time.Millisecond)
	var rows []ledger.Call
	for k := range keys {
		for v := range versions {
			rows = append(rows, ledger.Call{Tenant: "concurrent", TraceID: trace, SpanID: fmt.Sprintf("%016x", k), ServiceName: fmt.Sprintf("sender-%d", v),
				StartTime: base, EndTime: base, ResponseModel: fmt.Sprintf("model-v%d", v), FinishReasons: []string{}, StopSequences: []string{},
				RequestParams: map[string]string{}, AttributeIssues: []string{}, IngestedAt: base.Add(time.Duration(v) * time.Millisecond)})
		}
	}
	all := append(append([]ledger.Call(nil), rows...), rows...)
	rand.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	batches := make(chan []ledger.Call)
	go func() {
		for i := 0; i < len(all); i += 10 {
			batches <- all[i:min(i+10, len(all))]
		}
		close(batches)
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 {
		wg.Go(func() {
			for b := range batches {
				if err := testStore.InsertCalls(ctx, b); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := testStore.CallsByTrace(ctx, trace)
	if err != nil || len(got) != keys {
		t.Fatalf("%d rows for %d keys: %v", len(got), keys, err)
	}
	for _, c := range got {
		if c.ResponseModel != "model-v0" || c.ServiceName != "sender-0" || !c.IngestedAt.Equal(base) {
			t.Fatalf("not the first ingest: %+v", c)
		}
	}
	conflicts, err := testStore.ConflictsByTrace(ctx, trace)
	if err != nil || len(conflicts) != keys*(versions-1) {
		t.Fatalf("%d conflicts, want %d: %v", len(conflicts), keys*(versions-1), err)
	}
	for _, c := range conflicts {
		if c.OriginalService != "sender-0" || c.ConflictingService == "sender-0" || c.OriginalHash == c.ConflictingHash {
			t.Fatalf("conflict %+v", c)
		}
	}
	// Read by tenant, as the evidence page does: the same conflicts in
	// theirs, none in another.
	if mine, err := testStore.ConflictsByTrace(ctx, trace, "concurrent"); err != nil || len(mine) != len(conflicts) {
		t.Fatalf("in the tenant: %d conflicts, want %d: %v", len(mine), len(conflicts), err)
	}
	if other, err := testStore.ConflictsByTrace(ctx, trace, "elsewhere"); err != nil || len(other) != 0 {
		t.Fatalf("in another tenant: %+v %v", other, err)
	}
}

// Two versions ingested in the same millisecond: bits of the row hash in
// ingest_order decide, not the insert order. Each key gets its versions in
// the opposite order, so for one of them the winner was inserted first.
func TestSameMillisecondWinnerIgnoresInsertOrder(t *testing.T) {
	ctx := context.Background()
	trace := fmt.Sprintf("%032x", rand.Uint64())
	at := time.Now().UTC().Truncate(time.Millisecond)
	call := func(span, model string) ledger.Call {
		return ledger.Call{Tenant: "tie", TraceID: trace, SpanID: span, StartTime: at, EndTime: at, ResponseModel: model, FinishReasons: []string{},
			StopSequences: []string{}, RequestParams: map[string]string{}, AttributeIssues: []string{}, IngestedAt: at}
	}
	for _, batch := range [][]ledger.Call{{call("000000000000000a", "a")}, {call("000000000000000a", "b")},
		{call("000000000000000b", "b")}, {call("000000000000000b", "a")}} {
		if err := testStore.InsertCalls(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// The shown row's hash against the highest-ordered version's.
	q := "SELECT span_id, hex(row_hash) = (SELECT hex(argMax(row_hash, ingest_order)) FROM row_versions FINAL WHERE trace_id = '" + trace +
		"' AND span_id = c.span_id) AS highest FROM llm_calls AS c FINAL WHERE trace_id = '" + trace + "' ORDER BY span_id"
	n := 0
	err := testStore.Engine().QueryJSON(ctx, q, func(row []byte) error {
		n++
		if string(row) != fmt.Sprintf(`{"span_id":"%016x","highest":1}`, 9+n) {
			return fmt.Errorf("shown row is not the highest-ordered version: %s", row)
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Fatalf("%d rows: %v", n, err)
	}
}
