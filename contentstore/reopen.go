package contentstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
)

// reopenEvery is how often a store that could not be opened is tried again.
const reopenEvery = 5 * time.Second

// OpenOrReopen opens the store, or returns a stand-in when it cannot be
// opened now (a directory that cannot be created or read): every
// operation then fails with ErrUnavailable (the content processor records
// store_unavailable, the UI answers 503) until the store opens, which is
// tried in the background and by calls, at most once per reopenEvery.
// changed is told the store's state: the error at start, nil once open.
func OpenOrReopen(ctx context.Context, c Config, logger *zap.Logger, changed func(error)) Store {
	st, err := Open(ctx, c, logger)
	if err == nil {
		return st
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	logger.Error("content store unavailable at start: the collector starts without it and opens it when it can", zap.Error(err))
	changed(err)
	r := &reopening{cfg: c, logger: logger, changed: changed, stop: make(chan struct{}), lastTry: time.Now(), lastErr: err}
	go func() {
		t := time.NewTicker(reopenEvery)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				if _, err := r.get(context.Background()); err == nil {
					return
				}
			}
		}
	}()
	return r
}

type reopening struct {
	cfg     Config
	logger  *zap.Logger
	changed func(error)
	stop    chan struct{}

	mu      sync.Mutex
	st      Store
	lastTry time.Time
	lastErr error
}

// Available reports whether the store is open (the UI's status shows it).
func (r *reopening) Available() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st != nil
}

func (r *reopening) get(ctx context.Context) (Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st != nil {
		return r.st, nil
	}
	if time.Since(r.lastTry) >= reopenEvery {
		r.lastTry = time.Now()
		st, err := Open(ctx, r.cfg, r.logger)
		if err == nil {
			r.st, r.lastErr = st, nil
			r.logger.Info("content store available")
			r.changed(nil)
			return st, nil
		}
		r.lastErr = err
	}
	return nil, fmt.Errorf("%w: %w", ErrUnavailable, r.lastErr)
}

func (r *reopening) Put(ctx context.Context, tenant, kind string, content []byte) (PutResult, error) {
	st, err := r.get(ctx)
	if err != nil {
		return PutResult{}, err
	}
	return st.Put(ctx, tenant, kind, content)
}

func (r *reopening) PutBatch(ctx context.Context, objects []PutObject) []PutOutcome {
	st, err := r.get(ctx)
	if err != nil {
		out := make([]PutOutcome, len(objects))
		for i := range out {
			out[i].Err = err
		}
		return out
	}
	return st.PutBatch(ctx, objects)
}

func (r *reopening) Get(ctx context.Context, ref Ref) ([]byte, error) {
	st, err := r.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.Get(ctx, ref)
}

func (r *reopening) Stat(ctx context.Context, ref Ref) (ObjectInfo, error) {
	st, err := r.get(ctx)
	if err != nil {
		return ObjectInfo{}, err
	}
	return st.Stat(ctx, ref)
}

func (r *reopening) Delete(ctx context.Context, ref Ref) error {
	st, err := r.get(ctx)
	if err != nil {
		return err
	}
	return st.Delete(ctx, ref)
}

func (r *reopening) SetLegalHold(ctx context.Context, ref Ref, on bool) error {
	st, err := r.get(ctx)
	if err != nil {
		return err
	}
	return st.SetLegalHold(ctx, ref, on)
}

func (r *reopening) LegalHold(ctx context.Context, ref Ref) (bool, error) {
	st, err := r.get(ctx)
	if err != nil {
		return false, err
	}
	return st.LegalHold(ctx, ref)
}

func (r *reopening) List(ctx context.Context, sel Selection, fn func(ObjectInfo) error) error {
	st, err := r.get(ctx)
	if err != nil {
		return err
	}
	return st.List(ctx, sel, fn)
}

func (r *reopening) Limits() Limits {
	return Limits{MaxObjectBytes: r.cfg.MaxObjectBytes, MaxTotalBytes: r.cfg.MaxTotalBytes}
}

func (r *reopening) Usage() Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st == nil {
		return Usage{}
	}
	return r.st.Usage()
}

func (r *reopening) Close() error {
	close(r.stop)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st == nil {
		return nil
	}
	return r.st.Close()
}
