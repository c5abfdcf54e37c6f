package lifecycle

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Runner runs the lifecycle in the background, as SystemPrincipal: every
// interval it retries unfinished deletion jobs and then runs expiry (which
// first applies holds to calls that arrived since). chDB allows one process
// per ledger directory, so in embedded mode the runner lives in the process
// that owns the ledger. Replicas sharing a ledger each have a runner behind
// a Gate (a lease): only the holder runs.
type Runner struct {
	m        *Manager
	interval time.Duration
	gate     Gate

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
	status RunnerStatus
}

// RunnerStatus is what the runner is doing and last did.
type RunnerStatus struct {
	Running bool `json:"running"`
	// Progress of the expiry run under way, if any.
	Progress *Progress `json:"progress,omitempty"`
	// LastRun is the last expiry run that finished (or failed).
	LastRun *ExpiryRun `json:"last_run,omitempty"`
	// Orphans is the last cycle's orphan scan (Manager.Orphans).
	Orphans *OrphanReport `json:"orphans,omitempty"`
	// Standby is set while another replica holds the lease and runs the
	// cycles.
	Standby   bool      `json:"standby,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	LastCycle time.Time `json:"last_cycle,omitzero"`
	NextCycle time.Time `json:"next_cycle,omitzero"`
	Interval  string    `json:"interval"`
}

// Gate admits the runner's cycles: Enter returns a context for one cycle,
// cancelled when the gate closes (the lease is lost), or false while it is
// closed (another replica holds the lease). ledger/lease.Keeper is one.
type Gate interface {
	Enter(ctx context.Context) (context.Context, context.CancelFunc, bool)
}

// NewRunner returns a stopped runner; gate nil runs every cycle.
func NewRunner(m *Manager, interval time.Duration, gate Gate) *Runner {
	return &Runner{m: m, interval: interval, gate: gate, status: RunnerStatus{Interval: interval.String()}}
}

// Start starts the cycles, the first one interval from now. It fails if
// the runner is already started.
func (r *Runner) Start(ctx context.Context) error {
	if r.interval <= 0 {
		return errors.New("lifecycle: runner interval must be positive")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return errors.New("lifecycle: runner already started")
	}
	ctx, r.cancel = context.WithCancel(ctx)
	r.done = make(chan struct{})
	r.status.NextCycle = time.Now().Add(r.interval)
	go r.loop(ctx, r.done)
	return nil
}

// Stop cancels a cycle under way and waits for the runner to end.
func (r *Runner) Stop() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.cancel = nil
	r.mu.Unlock()
	if cancel == nil {
		return
	}
	cancel()
	<-done
}

// Status returns a snapshot of the runner's state.
func (r *Runner) Status() RunnerStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.status
	if s.Progress != nil {
		p := *s.Progress
		s.Progress = &p
	}
	return s
}

func (r *Runner) loop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(r.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.gated(ctx)
		}
	}
}

// gated runs a cycle if the gate admits it, and stops it when the gate
// closes.
func (r *Runner) gated(ctx context.Context) {
	if r.gate == nil {
		r.RunCycle(ctx)
		return
	}
	cycle, done, ok := r.gate.Enter(ctx)
	r.mu.Lock()
	r.status.Standby = !ok
	if !ok {
		r.status.NextCycle = time.Now().Add(r.interval)
	}
	r.mu.Unlock()
	if !ok {
		return
	}
	defer done()
	r.RunCycle(cycle)
}

// RunCycle runs one cycle now: unfinished deletion jobs, then expiry, then
// the orphan scan. Once ctx is cancelled (stopped, or the lease lost) no
// further job starts.
func (r *Runner) RunCycle(ctx context.Context) {
	r.mu.Lock()
	r.status.Running = true
	r.mu.Unlock()
	_, jobErr := r.m.ResumeDeletions(ctx, SystemPrincipal, "")
	var run ExpiryRun
	var expErr, orphanErr error
	if ctx.Err() == nil {
		run, expErr = r.m.Expire(ctx, SystemPrincipal, ExpireOptions{Progress: func(p Progress) {
			r.mu.Lock()
			r.status.Progress = &p
			r.mu.Unlock()
		}})
	}
	var orphans OrphanReport
	if ctx.Err() == nil {
		orphans, orphanErr = r.m.Orphans(ctx, SystemPrincipal, OrphanOptions{})
	}
	if orphanErr == nil && orphans.Orphans > 0 {
		r.m.logger.Warn("content objects the ledger references nowhere: out of reach of deletion and holds until expiry", "orphans", orphans.Orphans)
	}
	err := errors.Join(jobErr, expErr, orphanErr)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Running, r.status.Progress = false, nil
	if ctx.Err() != nil {
		return // stopped or lease lost: an interrupted run is on record as failed
	}
	if err != nil {
		r.m.logger.Error("lifecycle cycle failed", "err", err)
	}
	if run.ID != "" {
		r.status.LastRun = &run
	}
	if orphanErr == nil {
		r.status.Orphans = &orphans
	}
	r.status.LastError = ""
	if err != nil {
		r.status.LastError = errText(err)
	}
	r.status.LastCycle = time.Now()
	r.status.NextCycle = r.status.LastCycle.Add(r.interval)
}
