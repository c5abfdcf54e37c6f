// Package runs runs distribution replays in the background for the UI: a
// person starts one for one call, follows its progress and may cancel it.
// Runs are bounded: N and the cost budget have ceilings, one run per call
// at a time, a few runs at once, and each run has a time limit. Each run is
// a replay.Runner run, so it is recorded exactly as `docket replay` records
// one (ledger rows, results, access log).
package runs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/replay"
)

// Limits bound the runs started through a Manager.
type Limits struct {
	// MaxN is the most replays of one call. 0 means 50.
	MaxN int
	// MaxCostUSD is the highest budget a run may ask for, as a decimal
	// number of USD. Empty means "1.00".
	MaxCostUSD string
	// Timeout ends a run that takes longer. 0 means 10 minutes.
	Timeout time.Duration
	// MaxRunning bounds the runs in flight in this process. 0 means 4.
	MaxRunning int
	// Keep is how long a finished run's status stays readable. 0 means an hour.
	Keep time.Duration
}

func (l Limits) withDefaults() Limits {
	if l.MaxN <= 0 {
		l.MaxN = 50
	}
	if l.MaxCostUSD == "" {
		l.MaxCostUSD = "1.00"
	}
	if l.Timeout <= 0 {
		l.Timeout = 10 * time.Minute
	}
	if l.MaxRunning <= 0 {
		l.MaxRunning = 4
	}
	if l.Keep <= 0 {
		l.Keep = time.Hour
	}
	return l
}

// Run states.
const (
	StateRunning   = "running"
	StateDone      = "done"
	StateFailed    = "failed"
	StateCancelled = "cancelled"
)

// Errors of Start, in words that may be shown.
var (
	ErrInvalid = errors.New("invalid replay request")
	ErrBusy    = errors.New("replay busy")
)

// Request is a run of one call.
type Request struct {
	Call replay.CallID
	// N replays, within Limits.MaxN.
	N int
	// MaxCostUSD is the run's budget; required, within Limits.MaxCostUSD.
	MaxCostUSD string
	// Reason is recorded with every read and in the access log; required.
	Reason string
}

// Status is what the person who started a run sees of it; it holds no
// output text.
type Status struct {
	ID         string          `json:"id"`
	State      string          `json:"state"`
	Actor      string          `json:"actor"`
	TraceID    string          `json:"trace_id"`
	SpanID     string          `json:"span_id"`
	N          int             `json:"n"`
	MaxCostUSD string          `json:"max_cost_usd"`
	StartedAt  time.Time       `json:"started_at"`
	EndedAt    *time.Time      `json:"ended_at,omitempty"`
	Deadline   time.Time       `json:"deadline"`
	Progress   replay.Progress `json:"progress"`
	// Error says why a run failed or ended early.
	Error string `json:"error,omitempty"`
	// Result is the call's result once recorded (as in replay_results).
	Result *replay.Summary `json:"result,omitempty"`
}

type run struct {
	Status
	key    string
	cancel context.CancelFunc
}

// Manager starts and tracks runs.
type Manager struct {
	runner  *replay.Runner
	limits  Limits
	maxCost *pricing.PicoUSD

	mu     sync.Mutex
	runs   map[string]*run
	byCall map[string]string // call key → running run's ID
	wg     sync.WaitGroup
	ctx    context.Context
	stop   context.CancelFunc
}

// New returns a manager running replays with r within limits.
func New(r *replay.Runner, limits Limits) (*Manager, error) {
	limits = limits.withDefaults()
	maxCost, err := replay.ParseUSD(limits.MaxCostUSD)
	if err != nil {
		return nil, fmt.Errorf("runs: max cost: %w", err)
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Manager{runner: r, limits: limits, maxCost: &maxCost, runs: map[string]*run{}, byCall: map[string]string{}, ctx: ctx, stop: stop}, nil
}

// Limits are the manager's bounds, for the form that starts a run.
func (m *Manager) Limits() Limits { return m.limits }

// Start checks req and starts its run on behalf of p, who must be allowed
// to reveal the call's content (its tenant's principal).
func (m *Manager) Start(p access.Principal, tenant string, req Request) (Status, error) {
	if !p.CanReveal() || !p.MayAccessTenant(tenant) {
		return Status{}, fmt.Errorf("%w: role %q may not replay calls of this tenant: a replay sends their stored content", access.ErrDenied, p.Role)
	}
	if reason := strings.TrimSpace(req.Reason); reason == "" || len(reason) > access.MaxReasonLen || !utf8.ValidString(reason) {
		return Status{}, fmt.Errorf("%w: a reason is required (at most %d bytes): it is recorded with every read of the call's content", ErrInvalid, access.MaxReasonLen)
	}
	if req.N < 1 || req.N > m.limits.MaxN {
		return Status{}, fmt.Errorf("%w: N must be 1 to %d", ErrInvalid, m.limits.MaxN)
	}
	budget, err := replay.ParseUSD(req.MaxCostUSD)
	if err != nil || budget <= 0 || budget > *m.maxCost {
		return Status{}, fmt.Errorf("%w: the budget must be a decimal number of USD above 0 and at most %s", ErrInvalid, m.limits.MaxCostUSD)
	}
	key := tenant + "/" + req.Call.TraceID + "/" + req.Call.SpanID
	id, err := newID()
	if err != nil {
		return Status{}, err
	}
	now := time.Now().UTC()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.prune(now)
	if running, ok := m.byCall[key]; ok {
		return Status{}, fmt.Errorf("%w: this call is being replayed already (run %s)", ErrBusy, running)
	}
	if n := len(m.byCall); n >= m.limits.MaxRunning {
		return Status{}, fmt.Errorf("%w: %d replays are running; try again when one is done", ErrBusy, n)
	}
	ctx, cancel := context.WithTimeout(m.ctx, m.limits.Timeout)
	r := &run{key: key, cancel: cancel, Status: Status{ID: id, State: StateRunning, Actor: p.User, TraceID: req.Call.TraceID,
		SpanID: req.Call.SpanID, N: req.N, MaxCostUSD: req.MaxCostUSD, StartedAt: now, Deadline: now.Add(m.limits.Timeout)}}
	m.runs[id], m.byCall[key] = r, id
	opt := replay.Options{N: req.N, Purpose: req.Reason, MaxCalls: req.N, MaxCostUSD: req.MaxCostUSD,
		Progress: func(pr replay.Progress) {
			m.mu.Lock()
			r.Progress = pr
			m.mu.Unlock()
		}}
	m.wg.Go(func() {
		defer cancel()
		rep, err := m.runner.Replay(ctx, p, replay.Selection{Calls: []replay.CallID{req.Call}}, opt)
		m.finish(r, rep, err, ctx)
	})
	return r.Status, nil
}

func (m *Manager) finish(r *run, rep replay.Report, err error, ctx context.Context) {
	m.mu.Lock()
	defer m.mu.Unlock()
	end := time.Now().UTC()
	r.EndedAt = &end
	delete(m.byCall, r.key)
	if len(rep.Results) > 0 {
		s := replay.Summarize(rep.Results[0])
		r.Result = &s
	}
	switch {
	case err == nil:
		r.State = StateDone
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.State, r.Error = StateFailed, fmt.Sprintf("the run took longer than its limit of %s; the replays done are recorded", m.limits.Timeout)
	case errors.Is(err, context.Canceled):
		r.State, r.Error = StateCancelled, "cancelled; the replays done are recorded"
	case errors.Is(err, access.ErrDenied):
		r.State, r.Error = StateFailed, "access denied: "+err.Error()
	default:
		// Engine or store errors may quote a query; the log has them.
		r.State, r.Error = StateFailed, "the run failed; the replays done are recorded"
	}
}

// prune forgets finished runs older than Keep.
func (m *Manager) prune(now time.Time) {
	for id, r := range m.runs {
		if r.EndedAt != nil && now.Sub(*r.EndedAt) > m.limits.Keep {
			delete(m.runs, id)
		}
	}
}

// Get returns the status of run id if user started it.
func (m *Manager) Get(user, id string) (Status, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok || r.Actor != user {
		return Status{}, false
	}
	return r.Status, true
}

// Cancel stops run id if user started it; the replays done stay recorded.
func (m *Manager) Cancel(user, id string) (Status, bool) {
	m.mu.Lock()
	r, ok := m.runs[id]
	if !ok || r.Actor != user {
		m.mu.Unlock()
		return Status{}, false
	}
	cancel := r.cancel
	m.mu.Unlock()
	cancel()
	return m.Get(user, id)
}

// Close cancels every run and waits for them to record what they did.
func (m *Manager) Close() {
	m.stop()
	m.wg.Wait()
}

func newID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("runs: run ID: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
