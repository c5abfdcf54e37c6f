package lease

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Keeper holds a lease in the background: it claims or renews it every
// interval, and the work it admits (Enter) is cancelled as soon as the
// lease is lost or can no longer be trusted — when a renewal says another
// replica holds it, or when the deadline passes without a renewal (the
// engine unreachable, the process paused).
type Keeper struct {
	l      *Lease
	every  time.Duration
	logger *slog.Logger

	mu    sync.Mutex
	hold  context.Context // live while the lease is held; nil when not
	lose  context.CancelFunc
	timer *time.Timer

	stop chan struct{}
	done chan struct{}
}

// NewKeeper returns a stopped keeper renewing l every interval, which must
// be well within the lease's TTL.
func NewKeeper(l *Lease, every time.Duration, logger *slog.Logger) *Keeper {
	if logger == nil {
		logger = slog.Default()
	}
	return &Keeper{l: l, every: every, logger: logger}
}

// Start claims the lease now and then every interval, until Stop.
func (k *Keeper) Start() {
	k.stop, k.done = make(chan struct{}), make(chan struct{})
	go k.loop()
}

func (k *Keeper) loop() {
	defer close(k.done)
	t := time.NewTicker(k.every)
	defer t.Stop()
	for {
		k.step()
		select {
		case <-k.stop:
			return
		case <-t.C:
		}
	}
}

func (k *Keeper) step() {
	// A renewal that takes longer than the interval has failed; the
	// deadline timer ends the lease meanwhile if it must.
	ctx, cancel := context.WithTimeout(context.Background(), k.every)
	defer cancel()
	held, err := k.l.Acquire(ctx)
	if err != nil {
		k.logger.Warn("lease renewal failed", "lease", k.l.name, "err", err)
	}
	deadline, trusted := k.l.Deadline()
	k.mu.Lock()
	defer k.mu.Unlock()
	if !held || !trusted {
		k.loseLocked()
		return
	}
	if k.hold == nil {
		k.hold, k.lose = context.WithCancel(context.Background())
		k.logger.Info("lease taken: this replica does the work it guards", "lease", k.l.name, "holder", k.l.holder)
	}
	if k.timer != nil {
		k.timer.Stop()
	}
	k.timer = time.AfterFunc(time.Until(deadline), func() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if _, ok := k.l.Deadline(); !ok {
			k.loseLocked()
		}
	})
}

func (k *Keeper) loseLocked() { k.endLocked(false) }

// endLocked cancels the admitted work; stopping is a Stop, not a loss.
func (k *Keeper) endLocked(stopping bool) {
	if k.hold == nil {
		return
	}
	k.lose()
	k.hold, k.lose = nil, nil
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	if stopping {
		k.logger.Info("lease keeper stopped", "lease", k.l.name, "holder", k.l.holder)
		return
	}
	k.logger.Warn("lease lost: this replica stops the work it guards", "lease", k.l.name, "holder", k.l.holder)
}

// Enter admits one piece of work: a context derived from ctx that is
// cancelled when the lease is lost, or false when this replica does not
// hold the lease.
func (k *Keeper) Enter(ctx context.Context) (context.Context, context.CancelFunc, bool) {
	k.mu.Lock()
	hold := k.hold
	k.mu.Unlock()
	if hold == nil || !k.l.Held() {
		return nil, nil, false
	}
	work, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(hold, cancel)
	return work, func() { stop(); cancel() }, true
}

// Held reports whether this replica holds the lease now.
func (k *Keeper) Held() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hold != nil && k.l.Held()
}

// Stop ends renewing. With release the lease is given up at once, so
// another replica takes over at its next renewal; without, the lease runs
// out at its expiry, as when the process dies.
func (k *Keeper) Stop(ctx context.Context, release bool) error {
	if k.stop == nil {
		return nil
	}
	close(k.stop)
	<-k.done
	k.stop = nil
	k.mu.Lock()
	k.endLocked(true)
	k.mu.Unlock()
	if !release {
		return nil
	}
	return k.l.Release(ctx)
}
