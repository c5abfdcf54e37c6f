package lease_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/lease"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

// One chDB session per process: each test uses a lease name of its own.
var store *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }

var ctx = context.Background()

func newName(t *testing.T) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return t.Name() + "-" + hex.EncodeToString(b)
}

func newLease(t *testing.T, name, holder string, ttl time.Duration) *lease.Lease {
	t.Helper()
	l, err := lease.New(store.Engine(), name, holder, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func acquire(t *testing.T, l *lease.Lease) bool {
	t.Helper()
	held, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return held
}

func TestOneHolderRenewsAndAnotherTakesOverAfterExpiry(t *testing.T) {
	name := newName(t)
	const ttl = 800 * time.Millisecond
	a, b := newLease(t, name, "a", ttl), newLease(t, name, "b", ttl)
	if !acquire(t, a) {
		t.Fatal("a free lease was not taken")
	}
	if acquire(t, b) || b.Held() {
		t.Fatal("a held lease was taken by a second replica")
	}
	if !acquire(t, a) {
		t.Fatal("the holder could not renew")
	}
	cur, err := a.Current(ctx)
	if err != nil || cur.Term != 2 || cur.Holder != "a" || cur.Remaining <= 0 {
		t.Fatalf("after a renewal: %+v, %v", cur, err)
	}
	aDeadline, _ := a.Deadline()
	// a stops renewing (a dead replica): b gets the lease only once it
	// has expired, and by then a no longer trusts it.
	start := time.Now()
	for !acquire(t, b) {
		if time.Since(start) > 10*ttl {
			t.Fatal("the lease was never taken over")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if time.Now().Before(aDeadline) || a.Held() {
		t.Fatalf("b took the lease while a still trusted it (a's deadline %s, now %s)", aDeadline, time.Now())
	}
	if acquire(t, a) {
		t.Fatal("the old holder took the lease back from a live holder")
	}
	t.Logf("takeover %s after the last renewal (ttl %s)", time.Since(start), ttl)
}

// A renewal that landed but whose read-back failed (a timeout under
// load): the engine has the holder's claim of the next term, the holder
// still its last one. Its next renewal must see the lease as its own, not
// as another replica's to wait out (which cancelled a migration midway).
func TestRenewalAfterALostReadBack(t *testing.T) {
	name := newName(t)
	a := newLease(t, name, "a", time.Minute)
	if !acquire(t, a) {
		t.Fatal("a free lease was not taken")
	}
	// The claim of term 2 as a's renewal sent it, read back by nobody.
	if held, err := newLease(t, name, "a", time.Minute).Claim(ctx, 2, time.Minute); err != nil || !held {
		t.Fatalf("claim of term 2: %v %v", held, err)
	}
	if !acquire(t, a) || !a.Held() {
		t.Fatal("the holder lost its lease to its own unconfirmed renewal")
	}
	if cur, err := a.Current(ctx); err != nil || cur.Term != 3 || cur.Holder != "a" {
		t.Fatalf("after the renewal: %+v, %v", cur, err)
	}
	if acquire(t, newLease(t, name, "b", time.Minute)) {
		t.Fatal("another replica took the renewed lease")
	}
}

// Two claims of the same term: the engine keeps the first, so the second
// claimant learns it lost even though its holder ID sorts first.
func TestSecondClaimOfATermLoses(t *testing.T) {
	name := newName(t)
	z, a := newLease(t, name, "z", time.Minute), newLease(t, name, "a", time.Minute)
	if held, err := z.Claim(ctx, 1, time.Minute); err != nil || !held {
		t.Fatalf("first claim: %v %v", held, err)
	}
	if held, err := a.Claim(ctx, 1, time.Minute); err != nil || held {
		t.Fatalf("second claim of term 1 won: %v %v", held, err)
	}
	cur, err := z.Current(ctx)
	if err != nil || cur.Term != 1 || cur.Holder != "z" {
		t.Fatalf("lease after the race: %+v %v", cur, err)
	}
}

func TestConcurrentClaimantsElectOne(t *testing.T) {
	name := newName(t)
	const n = 6
	ls := make([]*lease.Lease, n)
	for i := range ls {
		ls[i] = newLease(t, name, "r"+string(rune('a'+i)), time.Minute)
	}
	for round := range 5 {
		var wg sync.WaitGroup
		won := make([]bool, n)
		for i, l := range ls {
			wg.Go(func() {
				held, err := l.Acquire(ctx)
				if err != nil {
					t.Error(err)
				}
				won[i] = held
			})
		}
		wg.Wait()
		var winner *lease.Lease
		for i, w := range won {
			if !w {
				continue
			}
			if winner != nil {
				t.Fatalf("round %d: %s and %s both hold the lease", round, winner.Holder(), ls[i].Holder())
			}
			winner = ls[i]
		}
		if winner == nil {
			t.Fatalf("round %d: nobody holds a free lease", round)
		}
		if err := winner.Release(ctx); err != nil {
			t.Fatal(err)
		}
		if winner.Held() {
			t.Fatal("released lease still held")
		}
	}
}

func TestKeeperCancelsWorkWhenTheLeaseIsLost(t *testing.T) {
	name := newName(t)
	const ttl = 600 * time.Millisecond
	a := newLease(t, name, "a", ttl)
	k := lease.NewKeeper(a, ttl/3, nil)
	k.Start()
	defer func() { _ = k.Stop(ctx, true) }()
	waitFor(t, 5*time.Second, k.Held)
	work, done, ok := k.Enter(ctx)
	if !ok {
		t.Fatal("the holder's keeper refused work")
	}
	defer done()
	// Another replica forces the next terms (as if a's renewals had not
	// landed in time): a learns it lost at its next renewal.
	b := newLease(t, name, "b", ttl)
	cur, err := b.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := b.Claim(ctx, cur.Term+1, time.Minute); err != nil || !held {
		t.Fatalf("b's claim: %v %v", held, err)
	}
	select {
	case <-work.Done():
	case <-time.After(5 * ttl):
		t.Fatal("work admitted under a lost lease was not cancelled")
	}
	if _, _, ok := k.Enter(ctx); ok {
		t.Fatal("work admitted after the lease was lost")
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The leases table forgets rows after 7 days without claims (its TTL),
// but the engine's dedup log keeps the tokens of the last 1000 claims
// however old. A lease idle that long starts again at term 1, whose token
// the log may still hold: the claim is dropped as a duplicate, and before
// salted retries nobody could ever take the lease again.
func TestLeaseTakenAgainAfterItsRowsExpired(t *testing.T) {
	name := newName(t)
	a := newLease(t, name, "a", time.Minute)
	for range 2 {
		if !acquire(t, a) {
			t.Fatal("a free lease was not taken or renewed")
		}
	}
	if err := a.Release(ctx); err != nil {
		t.Fatal(err)
	}
	// What the TTL does in a merge: the rows go, the dedup log stays.
	if err := store.Engine().Exec(ctx, "ALTER TABLE leases DELETE WHERE name = '"+name+"' SETTINGS mutations_sync = 1"); err != nil {
		t.Fatal(err)
	}
	if cur, err := a.Current(ctx); err != nil || cur.Term != 0 {
		t.Fatalf("the rows are still there: %+v, %v", cur, err)
	}
	b := newLease(t, name, "b", time.Minute)
	if !acquire(t, b) {
		t.Fatal("a lease whose rows expired could not be taken again")
	}
	c := newLease(t, name, "c", time.Minute)
	if acquire(t, c) {
		t.Fatal("a second replica took the lease from its new holder")
	}
	// Every term of the first life, replayed: each claim must still be
	// a compare-and-set between racers.
	for range 3 {
		if !acquire(t, b) {
			t.Fatal("the new holder could not renew")
		}
	}
	if cur, err := b.Current(ctx); err != nil || cur.Holder != "b" || cur.Term != 4 {
		t.Fatalf("after three renewals: %+v, %v", cur, err)
	}
}
