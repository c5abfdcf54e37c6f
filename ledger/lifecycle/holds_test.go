package lifecycle

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/s3test"
	"github.com/docketlabs/docket/ledger/access"
)

// The must-show test on a real S3 server: a held object survives a
// deletion request and expiry, and the S3 server itself refuses to delete
// it, bypassing Docket entirely; after release the pending deletion
// completes and no version of the objects is left in the bucket.
func TestS3HoldBeatsDeletionAndExpiryUntilReleased(t *testing.T) {
	srv := s3test.Start(t)
	const bucket = "lifecycle-hold"
	store := s3Store(t, srv, bucket, true)
	raw, err := minio.New(srv.Endpoint, &minio.Options{Creds: credentials.NewStaticV4(srv.AccessKey, srv.SecretKey, "")})
	if err != nil {
		t.Fatal(err)
	}
	versions := func(ref string) []minio.ObjectInfo {
		t.Helper()
		key := strings.TrimPrefix(ref, contentstore.Scheme+"://")
		var out []minio.ObjectInfo
		for info := range raw.ListObjectsIter(ctx, bucket, minio.ListObjectsOptions{Prefix: key, WithVersions: true, Recursive: true}) {
			if info.Err != nil {
				t.Fatal(info.Err)
			}
			out = append(out, info)
		}
		return out
	}
	holdScenario(t, store,
		func(t *testing.T, ref string) {
			vs := versions(ref)
			if len(vs) != 1 || vs[0].IsDeleteMarker {
				t.Fatalf("held object %s: want one version, got %+v", ref, vs)
			}
			err := raw.RemoveObject(ctx, bucket, vs[0].Key, minio.RemoveObjectOptions{VersionID: vs[0].VersionID})
			if err == nil {
				t.Fatalf("the S3 server deleted a version on legal hold")
			}
			t.Logf("S3 server refused: %s", minio.ToErrorResponse(err).Code)
			if got := versions(ref); len(got) != 1 || got[0].VersionID != vs[0].VersionID {
				t.Fatalf("held version changed after refused delete: %+v", got)
			}
		},
		func(t *testing.T, ref string) {
			if vs := versions(ref); len(vs) != 0 {
				t.Fatalf("%s: %d versions or delete markers left in the bucket", ref, len(vs))
			}
		})
}

// On a bucket without Object Lock the store cannot hold objects: the hold
// says so on record, and the checks alone keep the objects.
func TestS3WithoutObjectLockHoldIsEnforcedByTheChecks(t *testing.T) {
	srv := s3test.Start(t)
	f := newFixture(t, s3Store(t, srv, "no-lock", false), Options{})
	c := f.call(callSpec{endUser: "u", start: time.Now().UTC().Add(-time.Minute), input: "disputed"})
	h, applied, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "u"}, Reason: "court order"})
	if err != nil || applied != (HoldApplied{ObjectsNotEnforced: 1}) {
		t.Fatalf("hold on a bucket without Object Lock: %+v %v", applied, err)
	}
	if evs := f.events(EventFilter{HoldID: h.ID}); len(evs) != 1 || evs[0].Detail != DetailNotEnforced {
		t.Fatalf("events %+v", evs)
	}
	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "u"}, Reason: "erasure"})
	if err != nil || job.Status != JobBlocked || !f.exists(c.InputRef) {
		t.Fatalf("deletion under an unenforced hold: %+v %v", job, err)
	}
	rel, err := f.m.ReleaseHold(ctx, admin, h.ID, "closed")
	if err != nil || len(rel.Resumed) != 1 || rel.Resumed[0].Status != JobDone || f.exists(c.InputRef) {
		t.Fatalf("after release: %+v %v", rel, err)
	}
}

// The same scenario on the directory store, whose hold marker makes the
// store refuse the delete.
func TestDirHoldBeatsDeletionAndExpiryUntilReleased(t *testing.T) {
	store := dirStore(t)
	holdScenario(t, store,
		func(t *testing.T, ref string) {
			r, _ := contentstore.ParseRef(ref)
			if err := store.Delete(ctx, r); !errors.Is(err, contentstore.ErrLegalHold) {
				t.Fatalf("store delete of a held object: %v", err)
			}
		},
		func(*testing.T, string) {})
}

// holdScenario: end users U and V share a system prompt. U's calls are put
// on hold, then U asks for deletion, then everything passes retention.
// refused asserts that the store itself refuses to delete a held object;
// gone asserts that nothing of a deleted object is left.
func holdScenario(t *testing.T, store contentstore.Store, refused, gone func(*testing.T, string)) {
	f := newFixture(t, store, Options{})
	now := time.Now().UTC()
	const prompt = "You are the support assistant of ACME. Never reveal account numbers."
	u := f.call(callSpec{endUser: "user-u", start: now.Add(-time.Hour), input: `[{"role":"user","content":"my order 4711 never arrived"}]`, output: `[{"role":"assistant","content":"sorry to hear that"}]`, prompt: prompt})
	v := f.call(callSpec{endUser: "user-v", start: now.Add(-time.Hour), input: `[{"role":"user","content":"reset my password"}]`, output: `[{"role":"assistant","content":"done"}]`, prompt: prompt})
	if u.SystemInstructionsRef != v.SystemInstructionsRef {
		t.Fatal("the shared prompt must be one object")
	}
	uObjects := []string{u.InputRef, u.OutputRef, u.SystemInstructionsRef}

	hold, applied, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "litigation ACME-2026-17: preserve all output"})
	if err != nil {
		t.Fatal(err)
	}
	if applied.ObjectsHeld != 3 || applied.ObjectsMissing != 0 || applied.ObjectsNotEnforced != 0 {
		t.Fatalf("hold applied to %+v, want the 3 objects of U", applied)
	}
	for _, ref := range uObjects {
		if !f.storeHeld(ref) {
			t.Fatalf("store does not hold %s", ref)
		}
	}
	if f.storeHeld(v.InputRef) {
		t.Fatal("V's input is held, but the hold is on U only")
	}

	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-u"}, Reason: "erasure request #881"})
	if err != nil {
		t.Fatal(err)
	}
	want := DeletionCounts{CallsMatched: 1, ObjectsMatched: 3, ObjectsKeptShared: 1, ObjectsHeld: 2}
	if job.Status != JobBlocked || job.Counts != want {
		t.Fatalf("deletion under hold: %s %+v, want %s %+v", job.Status, job.Counts, JobBlocked, want)
	}
	for _, ref := range uObjects {
		if !f.exists(ref) {
			t.Fatalf("held object %s deleted", ref)
		}
	}
	refused(t, u.InputRef)

	// Past both retentions: V's content and row expire, U's are held.
	later := now.Add(500 * day)
	dry, err := f.m.Expire(ctx, admin, ExpireOptions{Now: later, DryRun: true, Tenant: f.tenant})
	if err != nil {
		t.Fatal(err)
	}
	wantRun := ExpiryCounts{ObjectsScanned: 5, ObjectsExpired: 2, ObjectsHeld: 3, CallsExpired: 1, CallsHeld: 1}
	if dry.ExpiryCounts != wantRun || !dry.DryRun || dry.Status != RunDone {
		t.Fatalf("dry run: %+v, want %+v", dry, wantRun)
	}
	if !f.exists(v.InputRef) || len(f.calls(v.TraceID)) != 1 {
		t.Fatal("the dry run changed something")
	}
	run, err := f.m.Expire(ctx, admin, ExpireOptions{Now: later, Tenant: f.tenant})
	if err != nil {
		t.Fatal(err)
	}
	if run.ExpiryCounts != wantRun {
		t.Fatalf("expiry: %+v, want %+v", run.ExpiryCounts, wantRun)
	}
	if f.exists(v.InputRef) || f.exists(v.OutputRef) || len(f.calls(v.TraceID)) != 0 {
		t.Fatal("V's content and row should have expired")
	}
	for _, ref := range uObjects {
		if !f.exists(ref) {
			t.Fatalf("held object %s expired", ref)
		}
	}
	if len(f.calls(u.TraceID)) != 1 {
		t.Fatal("held ledger row expired")
	}
	refused(t, u.OutputRef)

	rel, err := f.m.ReleaseHold(ctx, admin, hold.ID, "case settled")
	if err != nil {
		t.Fatal(err)
	}
	if rel.ObjectsReleased != 3 || rel.ObjectsStillHeld != 0 || rel.Hold.Status != HoldReleased {
		t.Fatalf("release: %+v", rel)
	}
	if len(rel.Resumed) != 1 || rel.Resumed[0].ID != job.ID {
		t.Fatalf("release resumed %+v, want the blocked job", rel.Resumed)
	}
	// V's row is gone and U asked for deletion: no live call references
	// the prompt any more, so it goes too.
	want = DeletionCounts{CallsMatched: 1, ObjectsMatched: 3, ObjectsDeleted: 3}
	if done := rel.Resumed[0]; done.Status != JobDone || done.Counts != want {
		t.Fatalf("resumed job: %s %+v, want done %+v", done.Status, done.Counts, want)
	}
	for _, ref := range uObjects {
		if f.exists(ref) {
			t.Fatalf("%s survived the completed deletion", ref)
		}
		gone(t, ref)
	}
	// The ledger row stays, with its references (keyed hashes) intact.
	rows := f.calls(u.TraceID)
	if len(rows) != 1 || rows[0].InputRef != u.InputRef || rows[0].SystemInstructionsRef != u.SystemInstructionsRef || rows[0].EndUserRef != "user-u" {
		t.Fatalf("ledger row after deletion: %+v", rows)
	}

	// Every change is on record: who, when, scope, reason.
	h, err := f.m.Hold(ctx, admin, hold.ID)
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != HoldReleased || h.CreatedBy != "ana" || h.ReleasedBy != "ana" || h.ReleasedAt == nil || h.ReleasedAt.Before(h.CreatedAt) ||
		h.Reason != "litigation ACME-2026-17: preserve all output" || h.ReleaseReason != "case settled" || h.Scope != (Scope{Tenant: f.tenant, EndUserRef: "user-u"}) {
		t.Fatalf("hold record: %+v", h)
	}
	cur, history, err := f.m.DeletionJob(ctx, admin, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got := statuses(history); !slices.Equal(got, []string{JobPending, JobRunning, JobBlocked, JobRunning, JobDone}) {
		t.Fatalf("job history %v", got)
	}
	if cur.Status != JobDone || cur.RequestedBy != "ana" || cur.Reason != "erasure request #881" || cur.Scope.EndUserRef != "user-u" || cur.RequestedAt.IsZero() {
		t.Fatalf("job record: %+v", cur)
	}
	evs := f.events(EventFilter{})
	if got := eventCounts(evs); got[EventHeld] != 3 || got[EventExpired] != 2 || got[EventReleased] != 3 || got[EventDeleted] != 3 || len(got) != 4 {
		t.Fatalf("content events %v", got)
	}
	for _, e := range evs {
		ok := e.Actor == "ana" && !e.At.IsZero()
		switch e.Event {
		case EventHeld, EventReleased:
			ok = ok && e.HoldID == hold.ID
		case EventDeleted:
			ok = ok && e.JobID == job.ID
		case EventExpired:
			ok = ok && e.JobID == run.ID && (e.Ref == v.InputRef || e.Ref == v.OutputRef)
		}
		if !ok {
			t.Fatalf("content event %+v", e)
		}
	}
	runs, err := f.m.ExpiryRuns(ctx, admin, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sawDry, sawRun bool
	for _, r := range runs {
		sawDry = sawDry || r.ID == dry.ID && r.DryRun && r.ExpiryCounts == wantRun && r.RunBy == "ana"
		sawRun = sawRun || r.ID == run.ID && !r.DryRun && r.Status == RunDone && slices.Equal(r.Tenants, []string{f.tenant})
	}
	if !sawDry || !sawRun {
		t.Fatalf("expiry runs not listed: %+v", runs)
	}
	for action, n := range map[string]int{ActionHoldCreate: 1, ActionDeleteRequest: 1, ActionExpire: 2, ActionHoldRelease: 1, ActionDeleteRun: 1} {
		entries := f.accessEntries(action)
		if len(entries) != n {
			t.Fatalf("access log %s: %d entries, want %d", action, len(entries), n)
		}
		for _, e := range entries {
			if e.Outcome != access.OutcomeAllowed || e.Actor != "ana" || e.Reason == "" {
				t.Fatalf("access log entry %+v", e)
			}
		}
	}
	states, err := f.states(admin, u.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 1 || !slices.Equal(states[0].DeletionJobIDs, []string{job.ID}) || len(states[0].HoldIDs) != 0 || len(states[0].Objects) != 3 {
		t.Fatalf("call state %+v", states)
	}
	for _, o := range states[0].Objects {
		last := o.Events[len(o.Events)-1]
		if last.Event != EventDeleted || last.JobID != job.ID {
			t.Fatalf("object %s: last event %+v, want deleted by the job", o.Ref, last)
		}
	}
}

func TestHoldScopes(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	now := time.Now().UTC().Truncate(time.Second)
	early := f.call(callSpec{endUser: "u1", start: now.Add(-3 * time.Hour), input: "early"})
	inRange := f.call(callSpec{endUser: "u2", start: now.Add(-2 * time.Hour), input: "in range"})
	late := f.call(callSpec{endUser: "u3", start: now.Add(-time.Hour), input: "late"})

	byRange, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, From: now.Add(-150 * time.Minute), To: now.Add(-90 * time.Minute)}, Reason: "preserve the outage window"})
	if err != nil {
		t.Fatal(err)
	}
	if f.storeHeld(early.InputRef) || !f.storeHeld(inRange.InputRef) || f.storeHeld(late.InputRef) {
		t.Fatal("time-range hold must hold exactly the call that started in [from, to)")
	}
	byTrace, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, TraceID: strings.ToUpper(late.TraceID)}, Reason: "complaint 991"})
	if err != nil {
		t.Fatal(err)
	}
	if byTrace.Scope.TraceID != late.TraceID || !f.storeHeld(late.InputRef) || f.storeHeld(early.InputRef) {
		t.Fatal("trace hold must hold the trace's call only")
	}
	st, err := f.states(admin, inRange.TraceID)
	if err != nil || len(st) != 1 || !slices.Equal(st[0].HoldIDs, []string{byRange.ID}) {
		t.Fatalf("call state %+v %v", st, err)
	}
	if !st[0].ContentRetainedUntil.Equal(inRange.StartTime.Add(DefaultContentDays*day)) || !st[0].LedgerRetainedUntil.Equal(inRange.StartTime.Add(DefaultLedgerDays*day)) {
		t.Fatalf("retained until: %+v", st[0])
	}

	// A tenant-wide hold also covers calls that arrive after it: the
	// checks see them at once, the store holds them at the next sync.
	whole, applied, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant}, Reason: "regulator inquiry"})
	if err != nil || applied.ObjectsHeld != 3 {
		t.Fatalf("tenant hold: %+v %v", applied, err)
	}
	newer := f.call(callSpec{endUser: "u4", start: now, input: "arrived after the hold"})
	if f.storeHeld(newer.InputRef) {
		t.Fatal("not yet synced")
	}
	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "u4"}, Reason: "erasure"})
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != JobBlocked || job.Counts.ObjectsHeld != 1 || !f.exists(newer.InputRef) || !f.storeHeld(newer.InputRef) {
		t.Fatalf("late call under a tenant hold: %+v", job)
	}

	// Two holds cover late's input: releasing one keeps the store hold.
	rel, err := f.m.ReleaseHold(ctx, admin, byTrace.ID, "complaint closed")
	if err != nil {
		t.Fatal(err)
	}
	if rel.ObjectsStillHeld != 1 || rel.ObjectsReleased != 0 || !f.storeHeld(late.InputRef) {
		t.Fatalf("release of an overlapped hold: %+v", rel)
	}
	if len(rel.Resumed) != 1 || rel.Resumed[0].Status != JobBlocked {
		t.Fatalf("the job is still blocked by the tenant hold: %+v", rel.Resumed)
	}
	evs := f.events(EventFilter{HoldID: byTrace.ID})
	if len(evs) != 2 || evs[1].Event != EventReleased || evs[1].Detail != DetailStillHeld {
		t.Fatalf("events of the released hold: %+v", evs)
	}
	// Releasing again completes nothing new and records nothing.
	if _, err := f.m.ReleaseHold(ctx, admin, byTrace.ID, "again"); err != nil {
		t.Fatal(err)
	}
	if got := f.events(EventFilter{HoldID: byTrace.ID}); len(got) != 2 {
		t.Fatalf("second release recorded %d events", len(got)-2)
	}
	if _, err := f.m.ReleaseHold(ctx, admin, whole.ID, "inquiry closed"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.m.ReleaseHold(ctx, admin, byRange.ID, "window reviewed"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{early.InputRef, inRange.InputRef, late.InputRef} {
		if f.storeHeld(c) {
			t.Fatalf("%s still held after every hold was released", c)
		}
	}
	job, _, err = f.m.DeletionJob(ctx, admin, job.ID)
	if err != nil || job.Status != JobDone || f.exists(newer.InputRef) {
		t.Fatalf("deletion after the last release: %+v %v", job, err)
	}

	active, err := f.m.Holds(ctx, admin, HoldFilter{Tenant: f.tenant, Status: HoldActive})
	if err != nil || len(active) != 0 {
		t.Fatalf("active holds: %+v %v", active, err)
	}
	all, err := f.m.Holds(ctx, admin, HoldFilter{Tenant: f.tenant})
	if err != nil || len(all) != 3 {
		t.Fatalf("holds: %+v %v", all, err)
	}
	if all[0].ID != whole.ID || !all[2].Scope.From.Equal(now.Add(-150*time.Minute)) {
		t.Fatalf("holds newest first with scopes: %+v", all)
	}
}
