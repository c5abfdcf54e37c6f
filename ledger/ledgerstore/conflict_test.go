package ledgerstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/storage"
)

// conflictsFromView is ConflictsByTrace as it read before it looked for
// contested tenants first: the row_conflicts view for each tenant, or once
// for every tenant.
func conflictsFromView(t *testing.T, traceID string, tenants ...string) []Conflict {
	t.Helper()
	if len(tenants) == 0 {
		tenants = []string{""}
	}
	var out []Conflict
	for _, tenant := range tenants {
		if err := testStore.query(context.Background(), "conflicts_by_trace", map[string]any{"trace_id": traceID, "tenant": tenant}, storage.DecodeRows(&out)); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// ConflictsByTrace reads the view only for the tenants in which a key of
// the trace holds several versions; it must find every conflict the view
// finds: one trace in three tenants, one with conflicts, one with
// redeliveries only (several rows of one version, no conflict), one with
// a key sent three times differently, and a trace without any; read for
// every tenant and for several lists of tenants.
func TestConflictsByTraceFindsWhatTheViewFinds(t *testing.T) {
	ctx := context.Background()
	shared, quiet := fmt.Sprintf("%032x", rand.Uint64()), fmt.Sprintf("%032x", rand.Uint64())
	base := time.Now().UTC().Truncate(time.Millisecond)
	call := func(tenant, trace, span, model string, ingested time.Duration) ledger.Call {
		return ledger.Call{Tenant: tenant, TraceID: trace, SpanID: span, ServiceName: "svc-" + model, StartTime: base, EndTime: base,
			ResponseModel: model, FinishReasons: []string{}, StopSequences: []string{}, RequestParams: map[string]string{},
			AttributeIssues: []string{}, IngestedAt: base.Add(ingested)}
	}
	batches := [][]ledger.Call{
		{call("cf-a", shared, "00000000000000a1", "m1", 0), call("cf-b", shared, "00000000000000b1", "m1", 0),
			call("cf-c", shared, "00000000000000c1", "m1", 0), call("cf-a", quiet, "00000000000000a2", "m1", 0)},
		{call("cf-a", shared, "00000000000000a1", "m2", time.Millisecond), call("cf-b", shared, "00000000000000b1", "m1", 0),
			call("cf-c", shared, "00000000000000c1", "m2", time.Millisecond), call("cf-a", quiet, "00000000000000a2", "m1", 0)},
		{call("cf-c", shared, "00000000000000c1", "m3", 2*time.Millisecond)},
	}
	for _, b := range batches {
		if err := testStore.InsertCalls(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	for _, trace := range []string{shared, quiet} {
		for _, tenants := range [][]string{nil, {"cf-a"}, {"cf-b"}, {"cf-c", "cf-a"}, {"cf-a", "cf-b", "cf-c"}, {"nowhere"}, {"nowhere", ""}} {
			got, err := testStore.ConflictsByTrace(ctx, trace, tenants...)
			if err != nil {
				t.Fatal(err)
			}
			want := conflictsFromView(t, trace, tenants...)
			if !slices.Equal(got, want) {
				t.Errorf("trace %s, tenants %v: %d conflicts %+v, the view %d %+v", trace[:6], tenants, len(got), got, len(want), want)
			}
		}
	}
	if n := len(conflictsFromView(t, shared)); n != 3 {
		t.Errorf("the fixture has %d conflicts, want 3 (one in cf-a, two in cf-c)", n)
	}
}
