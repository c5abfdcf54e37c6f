package lifecycle

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/s3test"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

// logRecord stores content as the contentref processor does for a log
// record carrying spanID's context (instrumentation-openai's
// gen_ai.user.message, gen_ai.choice) and writes its link, as the ledger
// exporter does on the logs pipeline; it returns the reference.
func (f *fixture) logRecord(trace, spanID, kind, content string, at time.Time) string {
	f.t.Helper()
	res, err := f.store.Put(ctx, f.tenant, kind, []byte(content))
	if err != nil {
		f.t.Fatal(err)
	}
	link := ledger.LogContentRef{Tenant: f.tenant, TraceID: trace, SpanID: spanID, Ref: res.Ref.String(),
		EventName: "gen_ai." + kind, Time: at, IngestedAt: time.Now()}
	if err := ledgerStore.InsertLogRefs(ctx, []ledger.LogContentRef{link}); err != nil {
		f.t.Fatal(err)
	}
	return res.Ref.String()
}

// TestLogRecordContentFollowsItsCall: content that arrived on log records
// of a call's span (and of a second instrumentation's span of the same
// call, which carries no end user) is the call's: revealable through its
// row, held under a hold on the call's end user (in the S3 store itself),
// not expired while held, kept by a deletion request while held and
// deleted by it on release; another end user's is untouched.
func TestLogRecordContentFollowsItsCall(t *testing.T) {
	srv := s3test.Start(t)
	f := newFixture(t, s3Store(t, srv, "lifecycle-logs", true), Options{})
	now := time.Now().UTC()
	start := now.Add(-time.Hour)
	u := f.call(callSpec{endUser: "user-u", start: start})
	uAsk := f.logRecord(u.TraceID, u.SpanID, "user.message", `{"content":"my order 4711 never arrived"}`, start)
	uAnswer := f.logRecord(u.TraceID, u.SpanID, "choice", `{"message":{"content":"sorry to hear that"}}`, start)
	inner := f.call(callSpec{trace: u.TraceID, parent: u.SpanID, start: start.Add(time.Millisecond)})
	innerAsk := f.logRecord(u.TraceID, inner.SpanID, "user.message", `{"content":"my order 4711 never arrived (SDK)"}`, start)
	v := f.call(callSpec{endUser: "user-v", start: start})
	vAsk := f.logRecord(v.TraceID, v.SpanID, "user.message", `{"content":"reset my password"}`, start)
	uObjects := []string{uAsk, uAnswer, innerAsk}

	// The call's one set of references holds them: the evidence page
	// lists them and reveal finds them through the row.
	calls := f.calls(u.TraceID)
	if len(calls) != 1 || len(calls[0].Refs()) != 3 {
		t.Fatalf("trace of U: %d calls, references %v", len(calls), calls[0].Refs())
	}
	states, err := f.states(admin, u.TraceID)
	if err != nil || len(states) != 1 || len(states[0].Objects) != 3 {
		t.Fatalf("call states %+v %v", states, err)
	}

	hold, applied, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "litigation 2026-17"})
	if err != nil || applied.ObjectsHeld != 3 {
		t.Fatalf("hold on U applied to %+v (%v), want U's 3 objects", applied, err)
	}
	for _, ref := range uObjects {
		if !f.storeHeld(ref) {
			t.Errorf("the store does not hold %s", ref)
		}
	}
	if f.storeHeld(vAsk) {
		t.Error("V's content is held, the hold is on U")
	}
	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "erasure request"})
	if err != nil || job.Status != JobBlocked || job.Counts.ObjectsHeld != 3 || job.Counts.ObjectsDeleted != 0 {
		t.Fatalf("deletion under hold: %+v %v", job, err)
	}
	// Past content retention: V's content expires, U's is held.
	run, err := f.m.Expire(ctx, admin, ExpireOptions{Now: now.Add(100 * day), Tenant: f.tenant})
	if err != nil {
		t.Fatal(err)
	}
	if run.ObjectsHeld != 3 || run.ObjectsExpired != 1 || f.exists(vAsk) {
		t.Fatalf("expiry under hold: %+v; V's content left %v", run.ExpiryCounts, f.exists(vAsk))
	}
	for _, ref := range uObjects {
		if !f.exists(ref) {
			t.Errorf("held object %s expired", ref)
		}
	}
	// The release runs the blocked deletion: U's log content goes.
	if _, err := f.m.ReleaseHold(ctx, admin, hold.ID, "case closed"); err != nil {
		t.Fatal(err)
	}
	for _, ref := range uObjects {
		if f.exists(ref) {
			t.Errorf("object %s survived the deletion request", ref)
		}
	}
	job, err = f.m.job(ctx, job.ID)
	if err != nil || job.Status != JobDone || job.Counts.ObjectsDeleted != 3 {
		t.Fatalf("deletion after release: %+v %v", job, err)
	}
}

// TestOrphansAreReported: an object no call, span or linked log record
// references is counted (after the grace), one that is referenced is not;
// a log record linked to a span of a trace the ledger does not hold does
// not make its object reachable.
func TestOrphansAreReported(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	now := time.Now().UTC()
	c := f.call(callSpec{start: now.Add(-time.Hour), input: "asked"})
	f.logRecord(c.TraceID, c.SpanID, "choice", "answered", now)
	f.span(c.TraceID, now, "tool arguments")
	f.logRecord(ledgertest.TraceID(t), ledgertest.SpanID(t), "user.message", "a record of a trace never seen", now)
	if _, err := f.store.Put(ctx, f.tenant, "input.messages", []byte("stored, never referenced")); err != nil {
		t.Fatal(err)
	}
	report, err := f.m.Orphans(ctx, admin, OrphanOptions{Tenant: f.tenant, Grace: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Tenants) != 1 || report.Orphans != 2 || report.Tenants[0].ObjectsScanned != 5 || report.Tenants[0].Orphans != 2 {
		t.Fatalf("orphan report %+v, want 2 of 5 objects", report)
	}
	// Fresh objects are not judged: their rows may still be queued.
	if report, err = f.m.Orphans(ctx, admin, OrphanOptions{Tenant: f.tenant}); err != nil || report.Orphans != 0 || len(report.Tenants) != 0 {
		t.Fatalf("within the grace: %+v %v", report, err)
	}
	if _, err := f.m.Orphans(ctx, access.Principal{User: "oli", Role: access.RoleAdmin, Tenants: []string{f.tenant}}, OrphanOptions{}); err == nil {
		t.Fatal("a principal of one tenant scanned every tenant")
	}
}

// TestHeldCallsSecondSpanDoesNotExpire: a call traced by two
// instrumentations, only the outer span carrying the end user, is held as
// one call: past ledger retention neither of its rows (nor the link of its
// log record) expires while a hold on the end user stands, and all do once
// it is released.
func TestHeldCallsSecondSpanDoesNotExpire(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	start := time.Now().UTC().Add(-time.Hour)
	outer := f.call(callSpec{endUser: "user-u", start: start, input: "U asks"})
	f.call(callSpec{trace: outer.TraceID, parent: outer.SpanID, start: start.Add(time.Millisecond), input: "U asks (SDK)"})
	other := f.call(callSpec{endUser: "user-v", start: start})
	f.logRecord(outer.TraceID, outer.SpanID, "choice", "U is answered", start)
	f.logRecord(other.TraceID, other.SpanID, "choice", "V is answered", start)
	hold, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "litigation"})
	if err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(500 * day)
	run, err := f.m.Expire(ctx, admin, ExpireOptions{Now: later, Tenant: f.tenant})
	if err != nil {
		t.Fatal(err)
	}
	if run.CallsHeld != 2 || run.CallsExpired != 1 || run.LogRefsHeld != 1 || run.LogRefsExpired != 1 || len(f.calls(other.TraceID)) != 0 {
		t.Fatalf("expiry under hold: %+v", run.ExpiryCounts)
	}
	if rows := physicalRows(t, f.tenant, outer.TraceID); rows != 2 {
		t.Fatalf("the held call keeps %d of its 2 span rows", rows)
	}
	if _, err := f.m.ReleaseHold(ctx, admin, hold.ID, "settled"); err != nil {
		t.Fatal(err)
	}
	if run, err = f.m.Expire(ctx, admin, ExpireOptions{Now: later, Tenant: f.tenant}); err != nil || run.CallsExpired != 2 || run.LogRefsExpired != 1 {
		t.Fatalf("after the release: %+v %v", run.ExpiryCounts, err)
	}
}

// physicalRows counts the stored call rows of a trace, spans of one call
// apart.
func physicalRows(t *testing.T, tenant, trace string) int {
	t.Helper()
	var n int
	err := ledgerStore.Engine().QueryJSON(ctx, "SELECT count() AS n FROM llm_calls FINAL WHERE tenant = '"+tenant+"' AND trace_id = '"+trace+"'", func(b []byte) error {
		var r struct {
			N json.Number `json:"n"`
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		v, err := r.N.Int64()
		n = int(v)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
