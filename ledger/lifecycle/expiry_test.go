package lifecycle

import (
	"fmt"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/contentstore"
)

func TestExpiryPerTenantRetentionAndDryRun(t *testing.T) {
	store := dirStore(t)
	short := newTenant(t)
	policy := DefaultPolicy()
	policy.Tenants = map[string]Retention{short: {ContentDays: 10, LedgerDays: 20}}
	a := newFixture(t, store, Options{Policy: policy})
	b := &fixture{t: t, m: a.m, store: store, tenant: short}
	now := time.Now().UTC()

	ca := a.call(callSpec{start: now.Add(-time.Hour), input: "A asks", prompt: "A's prompt"})
	a.evidence(ca.TraceID, now.Add(-time.Hour))
	cb := b.call(callSpec{start: now.Add(-time.Hour), input: "B asks", output: "B is answered", prompt: "B's prompt"})
	b.evidence(cb.TraceID, now.Add(-time.Hour))
	// Fifteen days on, this call is one day old and keeps B's prompt.
	recent := b.call(callSpec{start: now.Add(14 * day), prompt: "B's prompt"})
	held := b.call(callSpec{start: now.Add(-time.Hour), input: "B's disputed call"})
	b.evidence(held.TraceID, now.Add(-time.Hour))
	if _, _, err := a.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: short, TraceID: held.TraceID}, Reason: "dispute 12"}); err != nil {
		t.Fatal(err)
	}

	snapshot := func() []string {
		var refs []string
		err := store.List(ctx, contentstore.Selection{}, func(o contentstore.ObjectInfo) error {
			refs = append(refs, o.Ref.String())
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(refs)
		for _, trace := range []string{ca.TraceID, cb.TraceID, recent.TraceID, held.TraceID} {
			spans, err := ledgerStore.EvidenceByTrace(ctx, trace)
			if err != nil {
				t.Fatal(err)
			}
			refs = append(refs, fmt.Sprintf("%s: %d calls, %d spans", trace, len(a.calls(trace)), len(spans)))
		}
		return refs
	}
	before := snapshot()
	eventsBefore := len(b.events(EventFilter{})) + len(a.events(EventFilter{}))

	// Day 15: B's content retention (10 days) has passed, A's (90) has not.
	day15 := now.Add(15 * day)
	wantContent := ExpiryCounts{ObjectsScanned: 6, ObjectsExpired: 2, ObjectsKeptLive: 1, ObjectsHeld: 1}
	var progress []Progress
	dry, err := a.m.Expire(ctx, admin, ExpireOptions{Now: day15, DryRun: true, Progress: func(p Progress) { progress = append(progress, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if dry.ExpiryCounts != wantContent {
		t.Fatalf("dry run counts %+v, want %+v", dry.ExpiryCounts, wantContent)
	}
	if after := snapshot(); !slices.Equal(before, after) {
		t.Fatalf("the dry run changed the store or the ledger:\n%v\n%v", before, after)
	}
	if n := len(b.events(EventFilter{})) + len(a.events(EventFilter{})); n != eventsBefore {
		t.Fatal("the dry run recorded content events")
	}
	if len(progress) == 0 || progress[len(progress)-1].Phase != PhaseDone || progress[len(progress)-1].Counts != wantContent || !progress[0].DryRun {
		t.Fatalf("progress %+v", progress)
	}

	run, err := a.m.Expire(ctx, admin, ExpireOptions{Now: day15})
	if err != nil {
		t.Fatal(err)
	}
	if run.ExpiryCounts != wantContent || run.Status != RunDone || len(run.Tenants) != 0 {
		t.Fatalf("run %+v, want %+v", run, wantContent)
	}
	if b.exists(cb.InputRef) || b.exists(cb.OutputRef) {
		t.Fatal("B's content past retention survived")
	}
	if !b.exists(cb.SystemInstructionsRef) || !b.exists(held.InputRef) || !a.exists(ca.InputRef) || !a.exists(ca.SystemInstructionsRef) {
		t.Fatal("content within retention, still referenced or held was expired")
	}
	if evs := b.events(EventFilter{JobID: run.ID}); len(evs) != 2 || evs[0].Event != EventExpired || evs[0].Actor != "ana" {
		t.Fatalf("expired events %+v", evs)
	}

	// Day 25: B's ledger retention (20 days) has passed as well.
	run, err = a.m.Expire(ctx, admin, ExpireOptions{Now: now.Add(25 * day)})
	if err != nil {
		t.Fatal(err)
	}
	want := ExpiryCounts{ObjectsScanned: 4, ObjectsExpired: 1, ObjectsHeld: 1, CallsExpired: 1, CallsHeld: 1, EvidenceSpansExpired: 1, EvidenceSpansHeld: 1}
	if run.ExpiryCounts != want {
		t.Fatalf("day 25: %+v, want %+v", run.ExpiryCounts, want)
	}
	if b.exists(cb.SystemInstructionsRef) {
		t.Fatal("B's prompt outlived its last call's retention")
	}
	if len(b.calls(cb.TraceID)) != 0 || len(b.calls(recent.TraceID)) != 1 || len(b.calls(held.TraceID)) != 1 || len(a.calls(ca.TraceID)) != 1 {
		t.Fatal("ledger rows: want B's old row gone, the recent, the held and A's kept")
	}
	for trace, n := range map[string]int{cb.TraceID: 0, held.TraceID: 1, ca.TraceID: 1} {
		spans, err := ledgerStore.EvidenceByTrace(ctx, trace)
		if err != nil || len(spans) != n {
			t.Fatalf("evidence of %s: %d spans (%v), want %d", trace, len(spans), err, n)
		}
	}
}

func TestRunnerExpiresInTheBackground(t *testing.T) {
	store := dirStore(t)
	// The clock of the process is 100 days ahead: content is past its
	// default retention.
	ahead := func() time.Time { return time.Now().Add(100 * day) }
	f := newFixture(t, store, Options{Now: ahead})
	c := f.call(callSpec{start: time.Now().UTC(), input: "old by now"})
	r := NewRunner(f.m, 20*time.Millisecond, nil)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); err == nil {
		t.Fatal("a second Start must fail")
	}
	deadline := time.Now().Add(20 * time.Second)
	for r.Status().LastRun == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	r.Stop()
	st := r.Status()
	if st.LastRun == nil || st.LastRun.Status != RunDone || st.LastRun.RunBy != SystemPrincipal.User || st.LastError != "" || st.Running {
		t.Fatalf("runner status %+v", st)
	}
	if f.exists(c.InputRef) {
		t.Fatal("the runner did not expire the content")
	}
	if evs := f.events(EventFilter{Ref: c.InputRef}); len(evs) != 1 || evs[0].Event != EventExpired || evs[0].Actor != SystemPrincipal.User {
		t.Fatalf("events %+v", evs)
	}
	r.Stop() // stopping twice is harmless
}

// TestExpiryHeartbeatAndInterruptedRuns: a run shows it is alive during a
// slow phase, and a run whose process died reads as interrupted instead of
// running forever.
func TestExpiryHeartbeatAndInterruptedRuns(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	// Long enough that a loaded machine's scheduling delays (a run reads
	// as interrupted after three missed heartbeats) do not flip the status.
	f.m.heartbeatEvery = 150 * time.Millisecond
	f.call(callSpec{start: time.Now().UTC(), input: "kept"})
	state := func(id string) ExpiryRun {
		t.Helper()
		runs, err := f.m.ExpiryRuns(ctx, admin, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if r.ID == id {
				return r
			}
		}
		t.Fatalf("run %s not listed", id)
		return ExpiryRun{}
	}
	var first, later ExpiryRun
	run, err := f.m.Expire(ctx, admin, ExpireOptions{Tenant: f.tenant, Reason: "heartbeat test", Progress: func(p Progress) {
		if first.ID != "" {
			return
		}
		first = state(p.RunID)
		time.Sleep(600 * time.Millisecond) // a slow phase
		later = state(p.RunID)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != RunRunning || later.Status != RunRunning || !later.At.After(first.At) {
		t.Fatalf("no heartbeat during a slow phase: %+v, then %+v", first, later)
	}
	if got := state(run.ID); got.Status != RunDone || got.Error != "" {
		t.Fatalf("a heartbeat outlived the outcome: %+v", got)
	}

	// A killed process leaves its last heartbeat; three missed ones later
	// the run reads as interrupted.
	f.m.heartbeatEvery = time.Minute
	now := time.Now().UTC()
	dead := ExpiryRun{ID: newID("exp_"), AsOf: now, Tenants: []string{f.tenant}, RunBy: "ana", Reason: "killed",
		StartedAt: now.Add(-time.Hour), Status: RunRunning, At: now.Add(-10 * time.Minute)}
	alive := dead
	alive.ID, alive.At = newID("exp_"), now
	if err := insert(ctx, f.m, "lifecycle_insert_expiry_run", dead, alive); err != nil {
		t.Fatal(err)
	}
	if got := state(dead.ID); got.Status != RunInterrupted || !strings.Contains(got.Error, "no heartbeat since") {
		t.Fatalf("dead run: %+v", got)
	}
	if got := state(alive.ID); got.Status != RunRunning {
		t.Fatalf("live run: %+v", got)
	}
}

// A hold naming only an end user, placed after an expiry run read the keys
// of the rows past retention and before it deleted them, still keeps that
// end user's traces: their calls, the call span of a second
// instrumentation that does not name the end user, and their evidence.
func TestHoldByEndUserPlacedDuringExpiryKeepsItsTraces(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	start := time.Now().UTC().Add(-time.Hour)
	held := f.call(callSpec{endUser: "u-disputed", start: start, input: "disputed"})
	f.call(callSpec{trace: held.TraceID, parent: held.SpanID, start: start})
	f.evidence(held.TraceID, start)
	other := f.call(callSpec{endUser: "u-other", start: start, input: "expires"})
	f.evidence(other.TraceID, start)
	// A trace's stored call rows, its calls as the evidence page reads
	// them, and its evidence spans.
	count := func(trace string) [3]int {
		ev, err := ledgerStore.EvidenceByTrace(ctx, trace)
		if err != nil {
			t.Fatal(err)
		}
		return [3]int{physicalRows(t, f.tenant, trace), len(f.calls(trace)), len(ev)}
	}
	if got := count(held.TraceID); got != [3]int{2, 1, 1} {
		t.Fatalf("held trace before the run: %v rows, calls, evidence spans; want [2 1 1]", got)
	}

	// The run reads the keys of both tables with a cutoff after every row…
	params := map[string]any{"tenant": f.tenant, "cutoff": start.Add(day)}
	callKeys, err := f.m.expiringKeys(ctx, "lifecycle_expiring_call_keys", params)
	if err != nil {
		t.Fatal(err)
	}
	spanKeys, err := f.m.expiringKeys(ctx, "lifecycle_expiring_evidence_keys", params)
	if err != nil {
		t.Fatal(err)
	}
	if len(callKeys) != 3 || len(spanKeys) != 2 {
		t.Fatalf("keys read: %d calls, %d evidence spans; want 3 and 2", len(callKeys), len(spanKeys))
	}
	// …the hold is placed…
	if _, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "u-disputed"}, Reason: "complaint 17"}); err != nil {
		t.Fatal(err)
	}
	// …and the run deletes what it read.
	if err := f.m.removeKeys(ctx, "lifecycle_expire_calls", f.tenant, callKeys); err != nil {
		t.Fatal(err)
	}
	if err := f.m.removeKeys(ctx, "lifecycle_expire_evidence", f.tenant, spanKeys); err != nil {
		t.Fatal(err)
	}
	if err := ledgerStore.RefreshCallsBefore(ctx, f.tenant, start.Add(day)); err != nil {
		t.Fatal(err)
	}
	if got := count(held.TraceID); got != [3]int{2, 1, 1} {
		t.Fatalf("the held end user's trace kept %v rows, calls, evidence spans; want [2 1 1]", got)
	}
	if got := count(other.TraceID); got != [3]int{} {
		t.Fatalf("the trace no hold covers kept %v rows, calls, evidence spans", got)
	}
}

// A hold without an end user (on a tenant's time range) keeps the rows it
// covers by their own time: evidence spans and log records' links of a
// trace without calls, which no call's hold reaches; and, placed between
// a run's reading of the keys and its delete, call rows too. Rows outside
// the range expire.
func TestHoldOnATimeRangeKeepsRowsByTheirOwnTime(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	start := time.Now().UTC().Add(-time.Hour)
	before := start.Add(-10 * day)
	inRange, outOfRange := ledgertest.TraceID(t), ledgertest.TraceID(t)
	f.evidence(inRange, start)
	f.logRecord(inRange, ledgertest.SpanID(t), "choice", "in the range", start)
	f.evidence(outOfRange, before)
	f.logRecord(outOfRange, ledgertest.SpanID(t), "choice", "before the range", before)
	call := f.call(callSpec{endUser: "u", start: start, input: "asked"})
	early := f.call(callSpec{endUser: "u", start: before, input: "asked earlier"})

	// The run reads the call keys, then the hold is placed, then the run
	// deletes what it read.
	callKeys, err := f.m.expiringKeys(ctx, "lifecycle_expiring_call_keys", map[string]any{"tenant": f.tenant, "cutoff": start.Add(day)})
	if err != nil || len(callKeys) != 2 {
		t.Fatalf("call keys read: %d %v; want 2", len(callKeys), err)
	}
	scope := Scope{Tenant: f.tenant, From: start.Add(-time.Hour), To: start.Add(time.Hour)}
	if _, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: scope, Reason: "complaints of that hour"}); err != nil {
		t.Fatal(err)
	}
	if err := f.m.removeKeys(ctx, "lifecycle_expire_calls", f.tenant, callKeys); err != nil {
		t.Fatal(err)
	}
	if err := ledgerStore.RefreshCallsBefore(ctx, f.tenant, start.Add(day)); err != nil {
		t.Fatal(err)
	}
	if len(f.calls(call.TraceID)) != 1 || len(f.calls(early.TraceID)) != 0 {
		t.Fatalf("calls after the delete: in the range %d, before it %d; want 1 and 0", len(f.calls(call.TraceID)), len(f.calls(early.TraceID)))
	}

	later := time.Now().Add(500 * day)
	want := ExpiryCounts{EvidenceSpansExpired: 1, EvidenceSpansHeld: 1, LogRefsExpired: 1, LogRefsHeld: 1, CallsHeld: 1}
	got := func(r ExpiryRun) ExpiryCounts {
		return ExpiryCounts{EvidenceSpansExpired: r.EvidenceSpansExpired, EvidenceSpansHeld: r.EvidenceSpansHeld,
			LogRefsExpired: r.LogRefsExpired, LogRefsHeld: r.LogRefsHeld, CallsExpired: r.CallsExpired, CallsHeld: r.CallsHeld}
	}
	dry, err := f.m.Expire(ctx, admin, ExpireOptions{Now: later, Tenant: f.tenant, DryRun: true})
	if err != nil || got(dry) != want {
		t.Fatalf("dry run: %+v %v; want %+v", got(dry), err, want)
	}
	run, err := f.m.Expire(ctx, admin, ExpireOptions{Now: later, Tenant: f.tenant})
	if err != nil || got(run) != want {
		t.Fatalf("run: %+v %v; want %+v", got(run), err, want)
	}
	for trace, n := range map[string]int{inRange: 1, outOfRange: 0} {
		if ev, err := ledgerStore.EvidenceByTrace(ctx, trace); err != nil || len(ev) != n {
			t.Errorf("evidence spans of a trace: %d %v; want %d", len(ev), err, n)
		}
	}
}
