package lifecycle

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/s3test"
)

// pausingStore is a real store whose first Delete waits until the test
// lets it go on, so that a hold can be recorded after a batch of deletions
// read the holds and before it deletes. It logs the deletes it passes on
// and the events the test adds, in the order they happened.
type pausingStore struct {
	contentstore.Store
	once    sync.Once
	reached chan struct{}
	release chan struct{}

	mu  sync.Mutex
	log []string
}

func (s *pausingStore) Delete(ctx context.Context, ref contentstore.Ref) error {
	s.once.Do(func() {
		close(s.reached)
		<-s.release
	})
	s.note("delete " + ref.String())
	return s.Store.Delete(ctx, ref)
}

func (s *pausingStore) note(event string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, event)
}

func (s *pausingStore) events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// A hold recorded while a deletion job is between reading the holds and
// deleting: on a bucket without Object Lock nothing but the checks protects
// the objects, and before the fence CreateHold returned while the job went
// on to delete what the hold covers. Now CreateHold returns once the job's
// batch has ended: no object the hold covers is deleted after it returned.
func TestHoldRecordedDuringADeletionIsInForceWhenItReturns(t *testing.T) {
	srv := s3test.Start(t)
	store := &pausingStore{Store: s3Store(t, srv, "fence", false), reached: make(chan struct{}), release: make(chan struct{})}
	f := newFixture(t, store, Options{})
	c := f.call(callSpec{endUser: "u", start: time.Now().UTC().Add(-time.Minute), input: "disputed", output: "the answer"})
	scope := Scope{Tenant: f.tenant, EndUserRef: "u"}

	jobDone := make(chan error, 1)
	go func() {
		_, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: scope, Reason: "erasure"})
		jobDone <- err
	}()
	select {
	case <-store.reached:
	case err := <-jobDone:
		t.Fatalf("the deletion ended before deleting: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the deletion never reached the store")
	}
	type result struct {
		applied HoldApplied
		err     error
	}
	holdDone := make(chan result, 1)
	go func() {
		_, applied, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: scope, Reason: "litigation"})
		store.note("hold returned")
		holdDone <- result{applied, err}
	}()
	// Let the job delete once the hold has returned, or after a while if
	// the hold waits for the job.
	var res result
	returned := false
	select {
	case res = <-holdDone:
		returned = true
	case <-time.After(3 * time.Second):
	}
	close(store.release)
	if err := <-jobDone; err != nil {
		t.Fatal(err)
	}
	if !returned {
		res = <-holdDone
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	events := store.events()
	at := slices.Index(events, "hold returned")
	for _, ref := range []string{c.InputRef, c.OutputRef} {
		if i := slices.Index(events, "delete "+ref); i > at {
			t.Errorf("%s was deleted after the hold covering it returned: %q", ref, events)
		}
	}
	// The job's batch read the holds before the hold was recorded; its
	// deletes came first, and the hold says the objects were gone.
	if res.applied.ObjectsMissing != 2 || f.exists(c.InputRef) {
		t.Errorf("hold applied %+v after the deletion; input still stored: %v", res.applied, f.exists(c.InputRef))
	}
}

// A hold waits only for the batches that began before it: those that begin
// later read it, and a long job's next batches must not keep it waiting.
// A batch that ran past its bound deletes no more.
func TestHoldWaitsOnlyForEarlierBatches(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	first, err := f.m.beginDisposal(ctx, f.tenant)
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.m.beginDisposal(ctx, newTenant(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.m.endDisposal(ctx, other)
	// What a hold recorded now waits for: the open batches of its tenant.
	waiting, err := f.m.openDisposals(ctx, f.tenant)
	if err != nil || len(waiting) != 1 || !waiting[first.id] {
		t.Fatalf("open batches of the tenant: %v %v", waiting, err)
	}
	later, err := f.m.beginDisposal(ctx, f.tenant)
	if err != nil {
		t.Fatal(err)
	}
	defer f.m.endDisposal(ctx, later)
	done := make(chan error, 1)
	go func() { done <- f.m.waitForDisposals(ctx, f.tenant, waiting, time.Now().Add(disposalBound)) }()
	select {
	case err := <-done:
		t.Fatalf("the hold stopped waiting while an earlier batch was open: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	f.m.endDisposal(ctx, first)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the hold still waits after the earlier batch ended (for a later one, or another tenant's)")
	}
	// A batch that recorded no end is waited for until the bound only.
	start := time.Now()
	if err := f.m.waitForDisposals(ctx, f.tenant, map[string]bool{later.id: true}, start.Add(100*time.Millisecond)); err != nil || time.Since(start) > 10*time.Second {
		t.Fatalf("waiting past the bound: %v after %s", err, time.Since(start))
	}
	if err := (fence{deadline: time.Now().Add(-time.Millisecond)}).mayDelete(); !errors.Is(err, errDisposalOverran) {
		t.Fatalf("a batch past its bound may delete: %v", err)
	}
}
