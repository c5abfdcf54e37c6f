package lifecycle

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

func TestSharedPromptSurvivesDeletionForOneEndUser(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	now := time.Now().UTC()
	const prompt = "You are a careful assistant."
	u := f.call(callSpec{endUser: "user-u", start: now.Add(-time.Minute), input: "U asks", output: "U is answered", prompt: prompt})
	u2 := f.call(callSpec{endUser: "user-u", start: now.Add(-time.Minute), input: "U asks again", prompt: prompt})
	v := f.call(callSpec{endUser: "user-v", start: now.Add(-time.Minute), input: "V asks", output: "V is answered", prompt: prompt})
	// A call older than content retention keeps nothing alive.
	f.call(callSpec{endUser: "user-w", start: now.Add(-(DefaultContentDays + 1) * day), prompt: prompt})

	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "erasure request"})
	if err != nil {
		t.Fatal(err)
	}
	want := DeletionCounts{CallsMatched: 2, ObjectsMatched: 4, ObjectsDeleted: 3, ObjectsKeptShared: 1}
	if job.Status != JobDone || job.Counts != want {
		t.Fatalf("job %s %+v, want done %+v", job.Status, job.Counts, want)
	}
	for _, ref := range []string{u.InputRef, u.OutputRef, u2.InputRef} {
		if f.exists(ref) {
			t.Fatalf("U's object %s survived", ref)
		}
	}
	if !f.exists(u.SystemInstructionsRef) || !f.exists(v.InputRef) || !f.exists(v.OutputRef) {
		t.Fatal("the shared prompt or V's content was deleted")
	}
	if rows := f.calls(u.TraceID); len(rows) != 1 || rows[0].InputRef != u.InputRef || rows[0].OutputRef != u.OutputRef {
		t.Fatalf("U's ledger row must stay with its hashes: %+v", rows)
	}
	if evs := f.events(EventFilter{JobID: job.ID}); len(evs) != 3 || eventCounts(evs)[EventDeleted] != 3 {
		t.Fatalf("deletion events %+v", evs)
	}

	// Once V asks too, nothing live references the prompt.
	jobV, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-v"}, Reason: "erasure request"})
	if err != nil {
		t.Fatal(err)
	}
	want = DeletionCounts{CallsMatched: 1, ObjectsMatched: 3, ObjectsDeleted: 3}
	if jobV.Status != JobDone || jobV.Counts != want || f.exists(u.SystemInstructionsRef) {
		t.Fatalf("job for V: %s %+v, want done %+v and the prompt gone", jobV.Status, jobV.Counts, want)
	}
}

// TestSecondInstrumentationsContentFollowsTheCall: a call traced by two
// instrumentations (the Anthropic SDK's span under OpenLLMetry's) is one
// call; each stored its own copy of the prompt, and only one span carries
// the end user. A deletion request for the end user deletes both copies,
// and a hold keeps both.
func TestSecondInstrumentationsContentFollowsTheCall(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	start := time.Now().UTC().Add(-time.Minute)
	outer := f.call(callSpec{endUser: "user-u", start: start, input: "U asks", output: "U is answered"})
	inner := f.call(callSpec{trace: outer.TraceID, parent: outer.SpanID, start: start.Add(time.Millisecond),
		input: "U asks, as the SDK recorded it", output: "U is answered, as the SDK recorded it"})

	hold, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "litigation"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range []string{inner.InputRef, inner.OutputRef} {
		if !f.storeHeld(ref) {
			t.Errorf("the second instrumentation's object %s is not held", ref)
		}
	}
	if _, err := f.m.ReleaseHold(ctx, admin, hold.ID, "settled"); err != nil {
		t.Fatal(err)
	}
	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "erasure request"})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != JobDone || job.Counts.CallsMatched != 1 || job.Counts.ObjectsDeleted != 4 {
		t.Fatalf("job %s %+v, want done, 1 call and 4 objects deleted", job.Status, job.Counts)
	}
	for _, ref := range []string{outer.InputRef, outer.OutputRef, inner.InputRef, inner.OutputRef} {
		if f.exists(ref) {
			t.Errorf("object %s survived the deletion request", ref)
		}
	}
}

// TestSpanContentFollowsItsTracesCalls: content on a span that is not a
// call (a tool call's arguments) is deleted with the calls of its trace
// and held with them; content of another trace is not touched.
func TestSpanContentFollowsItsTracesCalls(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	now := time.Now().UTC()
	u := f.call(callSpec{endUser: "user-u", start: now.Add(-time.Minute), input: "U asks"})
	uTool := f.span(u.TraceID, now.Add(-time.Minute), `{"iban":"DE00 U"}`)
	v := f.call(callSpec{endUser: "user-v", start: now.Add(-time.Minute), input: "V asks"})
	vTool := f.span(v.TraceID, now.Add(-time.Minute), `{"iban":"DE00 V"}`)

	hold, applied, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-v"}, Reason: "complaint 17"})
	if err != nil || applied.ObjectsHeld != 2 || !f.storeHeld(vTool) || f.storeHeld(uTool) {
		t.Fatalf("hold on V: %+v %v; V's tool content held %v, U's %v", applied, err, f.storeHeld(vTool), f.storeHeld(uTool))
	}
	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "erasure request"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (DeletionCounts{CallsMatched: 1, ObjectsMatched: 2, ObjectsDeleted: 2}); job.Status != JobDone || job.Counts != want {
		t.Fatalf("job %s %+v, want done %+v", job.Status, job.Counts, want)
	}
	if f.exists(u.InputRef) || f.exists(uTool) || !f.exists(v.InputRef) || !f.exists(vTool) {
		t.Fatal("deletion must take U's call and tool content, and only those")
	}
	// Expiry and deletion see span content as live and held as its trace's
	// calls are.
	st, err := f.m.refStatuses(ctx, f.tenant, now.Add(-DefaultContentDays*day), []string{vTool, uTool})
	if err != nil || st[vTool] != (refStatus{live: true, held: true}) || st[uTool] != (refStatus{}) {
		t.Fatalf("span content status %+v %v", st, err)
	}
	if st, err = f.m.refStatuses(ctx, f.tenant, now.Add(time.Hour), []string{vTool}); err != nil || st[vTool] != (refStatus{held: true}) {
		t.Fatalf("span content past retention: %+v %v", st, err)
	}
	// V's deletion waits for the hold, tool content included.
	jobV, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-v"}, Reason: "erasure request"})
	if err != nil || jobV.Status != JobBlocked || jobV.Counts.ObjectsHeld != 2 || !f.exists(vTool) {
		t.Fatalf("held deletion: %+v %v", jobV, err)
	}
	if _, err := f.m.ReleaseHold(ctx, admin, hold.ID, "complaint closed"); err != nil {
		t.Fatal(err)
	}
	// The release resumes V's deletion.
	if f.exists(vTool) || f.exists(v.InputRef) {
		t.Fatal("after the release, V's deletion must take its call and tool content")
	}
}

func TestDeletionIsIdempotent(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	now := time.Now().UTC()
	trace := ledgertest.TraceID(t)
	a := f.call(callSpec{trace: trace, start: now.Add(-time.Minute), input: "first", output: "first answer"})
	b := f.call(callSpec{trace: trace, start: now.Add(-time.Minute), input: "second", output: "second answer"})
	// Someone removed one object already: still counts as deleted.
	r, _ := contentstore.ParseRef(b.OutputRef)
	if err := f.store.Delete(ctx, r); err != nil {
		t.Fatal(err)
	}

	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, TraceID: trace}, Reason: "complaint withdrawn, customer asked for erasure"})
	if err != nil {
		t.Fatal(err)
	}
	want := DeletionCounts{CallsMatched: 2, ObjectsMatched: 4, ObjectsDeleted: 4}
	if job.Status != JobDone || job.Counts != want {
		t.Fatalf("first run: %s %+v", job.Status, job.Counts)
	}
	for _, ref := range []string{a.InputRef, a.OutputRef, b.InputRef} {
		if f.exists(ref) {
			t.Fatalf("%s survived", ref)
		}
	}
	// A call of the trace that starts after the request is not covered.
	after := f.call(callSpec{trace: trace, start: time.Now().UTC().Add(time.Minute), input: "after the request"})

	again, err := f.m.RunDeletion(ctx, admin, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != JobDone || again.Counts != want {
		t.Fatalf("second run: %s %+v, want the same counts", again.Status, again.Counts)
	}
	if !f.exists(after.InputRef) {
		t.Fatal("the request deleted content of a call that started after it")
	}
	if evs := f.events(EventFilter{JobID: job.ID}); len(evs) != 3 {
		t.Fatalf("want 3 deleted events (the 4th object was already gone), got %d", len(evs))
	}
	_, history, err := f.m.DeletionJob(ctx, admin, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(history); !slices.Equal(got, []string{JobPending, JobRunning, JobDone, JobRunning, JobDone}) {
		t.Fatalf("history %v", got)
	}
	jobs, err := f.m.DeletionJobs(ctx, admin, JobFilter{Tenant: f.tenant})
	if err != nil || len(jobs) != 1 || jobs[0].ID != job.ID || jobs[0].Status != JobDone || jobs[0].Scope.TraceID != trace {
		t.Fatalf("jobs %+v %v", jobs, err)
	}
	// Nothing is left to resume.
	resumed, err := f.m.ResumeDeletions(ctx, admin, f.tenant)
	if err != nil || len(resumed) != 0 {
		t.Fatalf("resumed %+v %v", resumed, err)
	}
}

// References of a tenant with a long name are ~350 bytes: a page of them
// is more query text than ClickHouse accepts at once, so lookups are split.
func TestDeletionOfManyObjectsOfALongTenantName(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	f.tenant = strings.Repeat("ü", 40) + ledgertest.SpanID(t)[:4]
	now := time.Now().UTC().Add(-time.Minute)
	calls := make([]ledger.Call, 800)
	for i := range calls {
		res, err := f.store.Put(ctx, f.tenant, "input.messages", []byte(fmt.Sprintf("question %d", i)))
		if err != nil {
			t.Fatal(err)
		}
		calls[i] = ledgertest.Call(f.tenant, ledgertest.TraceID(t), ledgertest.SpanID(t))
		calls[i].EndUserRef, calls[i].InputRef = "u", res.Ref.String()
		calls[i].StartTime, calls[i].EndTime, calls[i].IngestedAt = now, now, now
	}
	if len(calls[0].InputRef) < 340 {
		t.Fatalf("reference only %d bytes", len(calls[0].InputRef))
	}
	if err := ledgerStore.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "u"}, Reason: "erasure"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (DeletionCounts{CallsMatched: 800, ObjectsMatched: 800, ObjectsDeleted: 800}); job.Status != JobDone || job.Counts != want {
		t.Fatalf("%s %+v", job.Status, job.Counts)
	}
	if f.exists(calls[799].InputRef) {
		t.Fatal("object survived")
	}
	if st, err := f.states(admin, calls[0].TraceID); err != nil || len(st) != 1 || len(st[0].Objects[0].Events) != 1 {
		t.Fatalf("call state %+v %v", st, err)
	}
}

func TestRefListsStayUnderTheQuerySizeLimit(t *testing.T) {
	refs := make([]string, 5000)
	for i := range refs {
		refs[i] = fmt.Sprintf("%0100d", i)
	}
	lists := refLists(refs)
	var joined []string
	for _, l := range lists {
		if len(l) > maxRefListBytes {
			t.Fatalf("list of %d bytes", len(l))
		}
		joined = append(joined, strings.Split(l, "\n")...)
	}
	if len(lists) < 2 || !slices.Equal(joined, refs) {
		t.Fatalf("%d lists lose or reorder references", len(lists))
	}
	if refLists(nil) != nil {
		t.Fatal("no references, no lists")
	}
}
