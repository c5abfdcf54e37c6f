package auth

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// kdfCounter watches the authenticator's KDF evaluations through its hook:
// how many ran per client address, the most that ran at once per address,
// and the order in which they started.
type kdfCounter struct {
	mu       sync.Mutex
	running  map[string]int
	peak     map[string]int
	total    map[string]int
	started  []string
	inFlight int
}

func watchKDF(a *Authenticator) *kdfCounter {
	c := &kdfCounter{running: map[string]int{}, peak: map[string]int{}, total: map[string]int{}}
	a.kdfHook = func(client string, start bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if !start {
			c.running[client]--
			c.inFlight--
			return
		}
		c.running[client]++
		c.inFlight++
		c.total[client]++
		c.peak[client] = max(c.peak[client], c.running[client])
		c.started = append(c.started, client)
	}
	return c
}

func (c *kdfCounter) startedSoFar() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.started)
}

func signInFrom(a *Authenticator, addr, user, password string) error {
	r := httptest.NewRequest(http.MethodPost, "/api/v1/session", nil)
	r.RemoteAddr = addr + ":40000"
	_, err := a.SignIn(httptest.NewRecorder(), r, user, password)
	return err
}

// TestParallelGuessesFromOneAddress: 60 guesses sent at once from one
// address get at most one KDF evaluation at a time, and no more
// evaluations than the per-address budget; the rest are refused before
// the KDF. Before the fix the throttle counted failures after the KDF, so
// all 60 were evaluated, two at a time.
func TestParallelGuessesFromOneAddress(t *testing.T) {
	a, _ := newBuiltin(t)
	kdf := watchKDF(a)
	const guesses = 60
	var wg sync.WaitGroup
	errs := make(chan error, guesses)
	start := make(chan struct{})
	for i := range guesses {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs <- signInFrom(a, "203.0.113.7", "admin", fmt.Sprintf("wrong password %03d", i))
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	refused := 0
	for err := range errs {
		switch {
		case errors.Is(err, ErrTooManyAttempts), errors.Is(err, ErrSignInBusy):
			refused++
		case !errors.Is(err, ErrBadCredentials):
			t.Fatalf("unexpected answer %v", err)
		}
	}
	peak, total := kdf.peak["203.0.113.7"], kdf.total["203.0.113.7"]
	t.Logf("%d guesses: %d KDF evaluations, at most %d at a time; %d refused before the KDF", guesses, total, peak, refused)
	if peak > 1 {
		t.Errorf("%d KDF evaluations ran at once for one address, want at most 1", peak)
	}
	if total > maxFailures {
		t.Errorf("%d KDF evaluations for one address, want at most %d", total, maxFailures)
	}
}

// TestFloodDoesNotDelayAnotherAddress: while addresses flood sign-in with
// bad guesses, a real sign-in from another address is admitted and waits
// behind a bounded number of KDF evaluations (counted, not timed), or is
// told at once that sign-in is busy. Before the fix it queued behind every
// guess in flight.
func TestFloodDoesNotDelayAnotherAddress(t *testing.T) {
	a, oneTime := newBuiltin(t)
	kdf := watchKDF(a)
	const attackers, perAttacker = 6, 40
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range attackers {
		for j := range perAttacker {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_ = signInFrom(a, fmt.Sprintf("198.51.100.%d", i+1), fmt.Sprintf("guess%02d", j), "wrong password!!")
			}()
		}
	}
	close(start)
	// Let the flood fill whatever queue there is.
	for kdf.startedSoFar() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	var ahead int
	var err error
	began := time.Now()
	for try := 0; try < 50; try++ {
		before := kdf.startedSoFar()
		err = signInFrom(a, "192.0.2.10", "admin", oneTime)
		if !errors.Is(err, ErrSignInBusy) {
			kdf.mu.Lock()
			for i := before; i < len(kdf.started) && kdf.started[i] != "192.0.2.10"; i++ {
				ahead++
			}
			kdf.mu.Unlock()
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(began)
	wg.Wait()
	if err != nil {
		t.Fatalf("the real sign-in failed: %v", err)
	}
	t.Logf("real sign-in during a flood of %d guesses from %d addresses: %d KDF evaluations ran before it, took %v",
		attackers*perAttacker, attackers, ahead, took.Round(time.Millisecond))
	if bound := kdfWorkers + kdfQueue; ahead > bound {
		t.Fatalf("the real sign-in waited behind %d KDF evaluations, want at most %d", ahead, bound)
	}
}
