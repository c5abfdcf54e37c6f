package auth

import (
	"errors"
	"time"
)

// Password checks cost an Argon2id run (64 MiB, ~0.1–1 s), so every one
// is reserved before it starts: the reservation counts against the
// address's budget and the account's backoff, allows one check at a time
// per address and per account, and takes a place in a bounded KDF queue —
// or is refused at once. A flood of guesses therefore neither gets more
// guesses evaluated than the budget allows nor makes a real sign-in wait
// behind it.

// ErrSignInBusy is returned when the KDF queue is full; the client may try
// again in a moment.
var ErrSignInBusy = errors.New("auth: sign-in is busy; try again in a moment")

const (
	// kdfWorkers password checks run at once (64 MiB each)…
	kdfWorkers = 2
	// …and at most kdfQueue more wait for a worker; past that, ErrSignInBusy.
	kdfQueue = 8

	// Failed checks allowed per client address within failureWindow.
	maxFailures   = 10
	failureWindow = 5 * time.Minute

	// An account's failures beyond freeAccountFailures in a row make its
	// next check wait accountBackoffBase, doubling per failure up to
	// accountBackoffMax; a success clears them.
	freeAccountFailures = 3
	accountBackoffBase  = time.Second
	accountBackoffMax   = 5 * time.Minute

	// maxTracked bounds each table of addresses and accounts; past it,
	// entries that no longer restrict anything go.
	maxTracked = 10000
)

// accountState is an account's run of failures (account names are tracked
// whether or not they exist, so backoff says nothing about existence).
type accountState struct {
	failures int
	notUntil time.Time
}

// attempt is a reserved password check.
type attempt struct {
	client, account string
}

// reserve books a password check for client and account, or says why not;
// release must follow exactly once.
func (a *Authenticator) reserve(client, account string) (attempt, error) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	acct := "user:" + account
	if a.recentFailuresLocked(client, now) >= maxFailures || now.Before(a.accounts[account].notUntil) {
		return attempt{}, ErrTooManyAttempts
	}
	if a.inFlight[client] || a.inFlight[acct] {
		return attempt{}, ErrSignInBusy
	}
	select {
	case a.kdfQueue <- struct{}{}:
	default:
		return attempt{}, ErrSignInBusy
	}
	a.inFlight[client], a.inFlight[acct] = true, true
	return attempt{client: client, account: account}, nil
}

// check runs one reserved password check on a KDF worker.
func (a *Authenticator) check(at attempt, fn func() error) error {
	a.kdf <- struct{}{}
	if a.kdfHook != nil {
		a.kdfHook(at.client, true)
	}
	err := fn()
	if a.kdfHook != nil {
		a.kdfHook(at.client, false)
	}
	<-a.kdf
	return err
}

// release ends a reservation with the check's outcome: a wrong password
// counts against the address and the account, a success clears the
// account's backoff, any other error does neither.
func (a *Authenticator) release(at attempt, outcome error) {
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	<-a.kdfQueue
	delete(a.inFlight, at.client)
	delete(a.inFlight, "user:"+at.account)
	switch {
	case outcome == nil:
		delete(a.accounts, at.account)
		return
	case !errors.Is(outcome, ErrBadCredentials):
		return
	}
	if len(a.failures) >= maxTracked {
		for c := range a.failures {
			if a.recentFailuresLocked(c, now) == 0 {
				delete(a.failures, c)
			}
		}
	}
	a.failures[at.client] = append(a.failures[at.client], now)
	if len(a.accounts) >= maxTracked {
		for name, st := range a.accounts {
			if now.Sub(st.notUntil) > accountBackoffMax {
				delete(a.accounts, name)
			}
		}
	}
	st := a.accounts[at.account]
	st.failures++
	if n := st.failures - freeAccountFailures; n > 0 {
		st.notUntil = now.Add(min(accountBackoffBase<<min(n-1, 20), accountBackoffMax))
	}
	a.accounts[at.account] = st
}

// recentFailuresLocked counts client's failures within the window,
// forgetting older ones.
func (a *Authenticator) recentFailuresLocked(client string, now time.Time) int {
	recent := a.failures[client][:0]
	for _, t := range a.failures[client] {
		if now.Sub(t) < failureWindow {
			recent = append(recent, t)
		}
	}
	if len(recent) == 0 {
		delete(a.failures, client)
	} else {
		a.failures[client] = recent
	}
	return len(recent)
}
