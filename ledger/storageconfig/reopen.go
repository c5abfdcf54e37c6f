package storageconfig

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
)

// ErrUnavailable is returned by a Reopening engine until the ledger opens.
var ErrUnavailable = errors.New("ledger unavailable")

// Reopening is a ledger engine that a process can start without: while
// the configured engine cannot be opened (a server that is down, an
// embedded directory that cannot be opened) its calls fail with
// ErrUnavailable, and it is opened again, at most once per interval, by
// the next call or by Retry.
type Reopening struct {
	cfg      Config
	interval time.Duration

	mu      sync.Mutex
	eng     storage.Engine
	lastTry time.Time
	lastErr error
	since   time.Time
}

var _ storage.Engine = (*Reopening)(nil)

// OpenReopening tries to open the engine once now.
func OpenReopening(ctx context.Context, cfg Config, interval time.Duration) *Reopening {
	r := &Reopening{cfg: cfg, interval: interval, since: time.Now()}
	_, _ = r.get(ctx, true)
	return r
}

// State is whether the ledger is open, and since when it is not.
type State struct {
	Available bool      `json:"available"`
	Since     time.Time `json:"unavailable_since,omitzero"`
	// Error is why it is not, as the engine said (engine errors are
	// scrubbed of query text and values).
	Error string `json:"error,omitempty"`
}

// State reports the current state without trying to open.
func (r *Reopening) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.eng != nil {
		return State{Available: true}
	}
	s := State{Since: r.since}
	if r.lastErr != nil {
		s.Error = r.lastErr.Error()
	}
	return s
}

// Retry tries to open the engine if it is not open and the interval has
// passed; it reports whether the ledger is available.
func (r *Reopening) Retry(ctx context.Context) bool {
	_, err := r.get(ctx, false)
	return err == nil
}

func (r *Reopening) get(ctx context.Context, now bool) (storage.Engine, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.eng != nil {
		return r.eng, nil
	}
	if !now && time.Since(r.lastTry) < r.interval {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, r.lastErr)
	}
	r.lastTry = time.Now()
	store, err := Open(ctx, r.cfg)
	if err != nil {
		r.lastErr = err
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	r.eng, r.lastErr = store.Engine(), nil
	return r.eng, nil
}

// Store is a ledger store on this storage, with its schema (a cluster's
// statements differ: queries.Schema.Statement).
func (r *Reopening) Store() *ledgerstore.Store { return ledgerstore.NewCluster(r, r.cfg.Schema()) }

// Underlying is the engine opened, or nil while the ledger is unavailable:
// what it can do beyond storage.Engine (storage.FilesOf) is the opened
// engine's.
func (r *Reopening) Underlying() storage.Engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.eng
}

func (r *Reopening) Exec(ctx context.Context, query string) error {
	e, err := r.get(ctx, false)
	if err != nil {
		return err
	}
	return e.Exec(ctx, query)
}

func (r *Reopening) Insert(ctx context.Context, query, format string, data ...[]byte) error {
	e, err := r.get(ctx, false)
	if err != nil {
		return err
	}
	return e.Insert(ctx, query, format, data...)
}

func (r *Reopening) QueryJSON(ctx context.Context, query string, fn func(row []byte) error) error {
	e, err := r.get(ctx, false)
	if err != nil {
		return err
	}
	return e.QueryJSON(ctx, query, fn)
}

func (r *Reopening) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.eng == nil {
		return nil
	}
	err := r.eng.Close()
	r.eng = nil
	return err
}

// Config is the engine configuration the ledger is opened from.
func (r *Reopening) Config() Config { return r.cfg }

// Watch retries opening every RetryInterval until the ledger opens, then
// calls available; or until stop is closed. It returns at once if the
// ledger is open.
func (r *Reopening) Watch(stop <-chan struct{}, available func()) {
	if r.State().Available {
		return
	}
	t := time.NewTicker(RetryInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if r.Retry(context.Background()) {
				available()
				return
			}
		}
	}
}
