package lifecycle

import (
	"slices"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage"
)

// TestCallStatesMatchTheView: CallStates matches holds and deletion
// requests to calls in Go (scopeCols.covers); the expiry, deletion and
// hold checks match them in SQL (the call_lifecycle view). Both must agree
// on every call, boundaries included.
func TestCallStatesMatchTheView(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	now := time.Now().UTC().Truncate(time.Millisecond)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	var calls []ledger.Call
	for i, s := range []callSpec{
		{endUser: "u1", start: at(-3 * time.Hour), input: "a"},
		{endUser: "u2", start: at(-2 * time.Hour), input: "b"},
		{endUser: "u1", start: at(-time.Hour), input: "c"},
		{endUser: "u3", start: at(-30 * time.Minute), input: "d"},
		{endUser: "u3", start: at(-30*time.Minute + time.Nanosecond), input: "e"},
		{endUser: "", start: at(-10 * time.Minute), input: "f"},
	} {
		s.trace = ledgertest.TraceID(t)
		if i == 4 {
			s.trace = calls[3].TraceID // two calls in one trace
		}
		calls = append(calls, f.call(s))
	}
	hold := func(s Scope) string {
		s.Tenant = f.tenant
		h, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: s, Reason: "scope test"})
		if err != nil {
			t.Fatal(err)
		}
		return h.ID
	}
	byRange := hold(Scope{From: at(-150 * time.Minute), To: at(-90 * time.Minute)})
	byUser := hold(Scope{EndUserRef: "u1"})
	hold(Scope{TraceID: calls[2].TraceID})
	// [start of d, start of e): d's start is in, e's (1 ns later) is out.
	boundary := hold(Scope{From: calls[3].StartTime, To: calls[4].StartTime})
	released := hold(Scope{EndUserRef: "u3"})
	if _, err := f.m.ReleaseHold(ctx, admin, released, "released before the check"); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Scope{{EndUserRef: "u2"}, {TraceID: calls[3].TraceID}, {From: at(-20 * time.Minute)}} {
		s.Tenant = f.tenant
		if _, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: s, Reason: "scope test"}); err != nil {
			t.Fatal(err)
		}
	}

	type viewRow struct {
		SpanID         string   `json:"span_id"`
		HoldIDs        []string `json:"hold_ids"`
		DeletionJobIDs []string `json:"deletion_job_ids"`
	}
	view, err := storage.QueryRows[viewRow](ctx, f.m.eng, "SELECT span_id, hold_ids, deletion_job_ids FROM call_lifecycle(tenant = {tenant:String})",
		map[string]any{"tenant": f.tenant})
	if err != nil {
		t.Fatal(err)
	}
	states, err := f.m.CallStates(ctx, admin, f.tenant, calls)
	if err != nil || len(states) != len(calls) || len(view) != len(calls) {
		t.Fatalf("%d states, %d view rows, want %d: %v", len(states), len(view), len(calls), err)
	}
	sorted := func(s []string) []string { return slices.Sorted(slices.Values(s)) }
	for _, v := range view {
		i := slices.IndexFunc(states, func(s CallState) bool { return s.SpanID == v.SpanID })
		if i < 0 {
			t.Fatalf("no state for %s", v.SpanID)
		}
		if s := states[i]; !slices.Equal(sorted(s.HoldIDs), sorted(v.HoldIDs)) || !slices.Equal(sorted(s.DeletionJobIDs), sorted(v.DeletionJobIDs)) {
			t.Errorf("call %s: Go matched holds %v deletions %v; the view %v %v", v.SpanID, s.HoldIDs, s.DeletionJobIDs, v.HoldIDs, v.DeletionJobIDs)
		}
	}
	// Content on another span of a trace is covered by what covers the
	// trace's calls (span_content_lifecycle spells the match out again).
	spanRefs := map[string]string{} // ref → trace
	for _, c := range calls {
		spanRefs[f.span(c.TraceID, c.StartTime, "tool content of "+c.SpanID)] = c.TraceID
	}
	type spanRow struct {
		Ref            string   `json:"ref"`
		HoldIDs        []string `json:"hold_ids"`
		DeletionJobIDs []string `json:"deletion_job_ids"`
	}
	spanView, err := storage.QueryRows[spanRow](ctx, f.m.eng, "SELECT ref, hold_ids, deletion_job_ids FROM span_content_lifecycle(tenant = {tenant:String})",
		map[string]any{"tenant": f.tenant})
	if err != nil || len(spanView) != len(spanRefs) {
		t.Fatalf("%d span rows, want %d: %v", len(spanView), len(spanRefs), err)
	}
	for _, r := range spanView {
		var holds, deletions []string
		for _, c := range calls {
			if c.TraceID != spanRefs[r.Ref] {
				continue
			}
			i := slices.IndexFunc(view, func(v viewRow) bool { return v.SpanID == c.SpanID })
			holds, deletions = append(holds, view[i].HoldIDs...), append(deletions, view[i].DeletionJobIDs...)
		}
		holds, deletions = slices.Compact(sorted(holds)), slices.Compact(sorted(deletions))
		if !slices.Equal(sorted(r.HoldIDs), holds) || !slices.Equal(sorted(r.DeletionJobIDs), deletions) {
			t.Errorf("span content %s: holds %v deletions %v; its trace's calls %v %v", r.Ref, r.HoldIDs, r.DeletionJobIDs, holds, deletions)
		}
	}

	// The cases the test is about, so that it cannot pass on empty lists.
	for i, want := range [][]string{{byUser}, {byRange}, {byUser}, {boundary}, {}, {}} {
		got := states[i].HoldIDs
		if i == 2 {
			got = slices.DeleteFunc(slices.Clone(got), func(id string) bool { return id != byUser })
		}
		if !slices.Equal(sorted(got), want) {
			t.Errorf("call %d: holds %v, want %v", i, states[i].HoldIDs, want)
		}
	}
	for i, n := range []int{0, 1, 0, 1, 1, 1} {
		if len(states[i].DeletionJobIDs) != n {
			t.Errorf("call %d: deletion requests %v, want %d", i, states[i].DeletionJobIDs, n)
		}
	}
}
