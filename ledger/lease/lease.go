// Package lease elects one holder among replicas that share a ledger, for
// jobs that must run in exactly one place (the lifecycle runner). A lease
// has a name, a holder and an expiry kept by the engine's clock; the holder
// renews it, and another replica may take it only once it has expired.
//
// ClickHouse has no transactions, so every change is a claim of the next
// term inserted with a deduplication token per term (queries/lease_*.sql):
// of two claims of one term the engine keeps one, and the claimants read
// back the same winner. A holder trusts its lease only until its own
// deadline — the time it sent the claim plus the TTL, less a margin — which
// is never later than the expiry the engine recorded, so it has stopped
// before anyone else can take over.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// Lease is one replica's handle on a named lease. It is safe for
// concurrent use.
type Lease struct {
	eng    storage.Engine
	name   string
	holder string
	ttl    time.Duration
	margin time.Duration

	mu       sync.Mutex
	term     uint64    // the term this replica holds, 0 if none
	deadline time.Time // until when it trusts that term (monotonic clock)
}

// New returns a handle on lease name for a holder. ttl is how long a claim
// lasts without renewal; renew well within it (a third is usual).
func New(eng storage.Engine, name, holder string, ttl time.Duration) (*Lease, error) {
	if name == "" || holder == "" {
		return nil, errors.New("lease: a name and a holder are required")
	}
	if ttl < 10*time.Millisecond {
		return nil, fmt.Errorf("lease: ttl %s is too short", ttl)
	}
	// The margin absorbs the clock-rate difference between this process
	// and the engine over one TTL, and the time a claim takes to land.
	return &Lease{eng: eng, name: name, holder: holder, ttl: ttl, margin: ttl / 10}, nil
}

// NewHolderID names this replica: the host, the process and random bits,
// so that a restarted process is a new holder.
func NewHolderID() string {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// Holder is this replica's holder ID.
func (l *Lease) Holder() string { return l.holder }

// State is a lease as the engine has it.
type State struct {
	Term   uint64 `json:"term"`
	Holder string `json:"holder"`
	// Remaining is how long the claim lasts by the engine's clock;
	// negative once expired.
	Remaining time.Duration `json:"-"`
}

// Current reads the lease; the zero State when it was never claimed.
func (l *Lease) Current(ctx context.Context) (State, error) {
	q, err := storage.Bind(queries.MustGet("lease_current"), map[string]any{"name": l.name})
	if err != nil {
		return State{}, err
	}
	var s State
	err = l.eng.QueryJSON(ctx, q, func(row []byte) error {
		var r struct {
			Term        uint64 `json:"term"`
			Holder      string `json:"holder"`
			RemainingMS int64  `json:"remaining_ms"`
		}
		if uerr := json.Unmarshal(row, &r); uerr != nil {
			return uerr
		}
		s = State{Term: r.Term, Holder: r.Holder, Remaining: time.Duration(r.RemainingMS) * time.Millisecond}
		return nil
	})
	if err != nil {
		return State{}, fmt.Errorf("lease %s: read: %w", l.name, err)
	}
	return s, nil
}

// Acquire takes the lease if it is free or expired, or renews it if this
// replica holds it, and reports whether this replica holds it now. On an
// error it holds the lease no longer than it did before the call.
func (l *Lease) Acquire(ctx context.Context) (bool, error) {
	cur, err := l.Current(ctx)
	if err != nil {
		return l.Held(), err
	}
	// Mine by the holder, not the term: a renewal that landed but whose
	// read-back failed left the engine a term ahead of this handle.
	l.mu.Lock()
	mine := l.term != 0 && cur.Holder == l.holder
	l.mu.Unlock()
	if !mine && cur.Term != 0 && cur.Remaining > 0 {
		l.drop()
		return false, nil
	}
	return l.claim(ctx, cur.Term+1, l.ttl)
}

// claimAttempts bounds the tokens one term is claimed with (see claim).
const claimAttempts = 8

// claim sends a claim of term and reads back who won it.
//
// The leases table forgets a lease's rows after 7 days without claims
// (0015_leases.sql), while the engine's dedup log keeps the tokens of the
// last claims however old; the lease then starts again at term 1 and a
// token may already be in the log, so the claim is dropped as a duplicate.
// When no claim of the term is visible afterwards, nobody won it: the
// claim is sent again under the next token of a fixed sequence. Racers for
// the term go through the same sequence, so each claim stays a
// compare-and-set.
func (l *Lease) claim(ctx context.Context, term uint64, ttl time.Duration) (bool, error) {
	for attempt := 0; attempt < claimAttempts; attempt++ {
		token := l.name + ":" + strconv.FormatUint(term, 10)
		if attempt > 0 {
			token += ":" + strconv.Itoa(attempt)
		}
		sent := time.Now()
		q, err := storage.Bind(queries.MustGet("lease_claim"), map[string]any{
			"token": token, "name": l.name, "term": term, "holder": l.holder,
			"ttl_ms": uint64(ttl / time.Millisecond)})
		if err != nil {
			return false, err
		}
		if err = l.eng.Exec(ctx, q); err != nil {
			return l.Held(), fmt.Errorf("lease %s: claim term %d: %w", l.name, term, err)
		}
		cur, err := l.Current(ctx)
		if err != nil {
			return l.Held(), err
		}
		if cur.Term < term {
			continue
		}
		if cur.Term != term || cur.Holder != l.holder || ttl == 0 {
			l.drop()
			return false, nil
		}
		l.mu.Lock()
		l.term, l.deadline = term, sent.Add(ttl-l.margin)
		l.mu.Unlock()
		return true, nil
	}
	l.drop()
	return false, fmt.Errorf("lease %s: no claim of term %d landed under %d tokens", l.name, term, claimAttempts)
}

func (l *Lease) drop() {
	l.mu.Lock()
	l.term, l.deadline = 0, time.Time{}
	l.mu.Unlock()
}

// Held reports whether this replica holds the lease and may still trust
// it: its last successful claim has not run out.
func (l *Lease) Held() bool {
	_, ok := l.Deadline()
	return ok
}

// Deadline is until when this replica trusts its lease, and whether it
// holds one at all.
func (l *Lease) Deadline() (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.term == 0 || !time.Now().Before(l.deadline) {
		return time.Time{}, false
	}
	return l.deadline, true
}

// Release gives the lease up at once, if this replica holds it, so that
// another replica need not wait for it to expire.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	term := l.term
	l.mu.Unlock()
	if term == 0 {
		return nil
	}
	l.drop()
	// An expired claim of the next term: it wins only if nobody took the
	// lease meanwhile, and then frees it.
	_, err := l.claim(ctx, term+1, 0)
	return err
}
