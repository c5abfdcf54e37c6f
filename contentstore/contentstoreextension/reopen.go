package contentstoreextension

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/contentstore"
)

// reopenEvery is how often a store that could not be opened is tried again.
const reopenEvery = 5 * time.Second

// reopening stands in for a store that could not be opened at start (a
// directory that cannot be created or read): the collector starts, every
// operation fails with ErrUnavailable (the content processor records
// store_unavailable, the UI answers 503) until the store opens, which is
// tried in the background and by calls, at most once per reopenEvery.
type reopening struct {
	cfg    *Config
	logger *zap.Logger
	host   component.Host
	stop   chan struct{}

	mu      sync.Mutex
	st      contentstore.Store
	lastTry time.Time
	lastErr error
}

func newReopening(cfg *Config, logger *zap.Logger, host component.Host, err error) *reopening {
	r := &reopening{cfg: cfg, logger: logger, host: host, stop: make(chan struct{}), lastTry: time.Now(), lastErr: err}
	logger.Error("content store unavailable at start: the collector starts without it and opens it when it can", zap.Error(err))
	componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
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

// Available reports whether the store is open (the UI's status shows it).
func (r *reopening) Available() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st != nil
}

func (r *reopening) get(ctx context.Context) (contentstore.Store, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st != nil {
		return r.st, nil
	}
	if time.Since(r.lastTry) >= reopenEvery {
		r.lastTry = time.Now()
		st, err := contentstore.Open(ctx, r.cfg.Config, r.logger)
		if err == nil {
			r.st, r.lastErr = st, nil
			r.logger.Info("content store available")
			componentstatus.ReportStatus(r.host, componentstatus.NewEvent(componentstatus.StatusOK))
			return st, nil
		}
		r.lastErr = err
	}
	return nil, fmt.Errorf("%w: %w", contentstore.ErrUnavailable, r.lastErr)
}

func (r *reopening) Put(ctx context.Context, tenant, kind string, content []byte) (contentstore.PutResult, error) {
	st, err := r.get(ctx)
	if err != nil {
		return contentstore.PutResult{}, err
	}
	return st.Put(ctx, tenant, kind, content)
}

func (r *reopening) Get(ctx context.Context, ref contentstore.Ref) ([]byte, error) {
	st, err := r.get(ctx)
	if err != nil {
		return nil, err
	}
	return st.Get(ctx, ref)
}

func (r *reopening) Stat(ctx context.Context, ref contentstore.Ref) (contentstore.ObjectInfo, error) {
	st, err := r.get(ctx)
	if err != nil {
		return contentstore.ObjectInfo{}, err
	}
	return st.Stat(ctx, ref)
}

func (r *reopening) Delete(ctx context.Context, ref contentstore.Ref) error {
	st, err := r.get(ctx)
	if err != nil {
		return err
	}
	return st.Delete(ctx, ref)
}

func (r *reopening) SetLegalHold(ctx context.Context, ref contentstore.Ref, on bool) error {
	st, err := r.get(ctx)
	if err != nil {
		return err
	}
	return st.SetLegalHold(ctx, ref, on)
}

func (r *reopening) LegalHold(ctx context.Context, ref contentstore.Ref) (bool, error) {
	st, err := r.get(ctx)
	if err != nil {
		return false, err
	}
	return st.LegalHold(ctx, ref)
}

func (r *reopening) List(ctx context.Context, sel contentstore.Selection, fn func(contentstore.ObjectInfo) error) error {
	st, err := r.get(ctx)
	if err != nil {
		return err
	}
	return st.List(ctx, sel, fn)
}

func (r *reopening) Limits() contentstore.Limits {
	return contentstore.Limits{MaxObjectBytes: r.cfg.MaxObjectBytes, MaxTotalBytes: r.cfg.MaxTotalBytes}
}

func (r *reopening) Usage() contentstore.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st == nil {
		return contentstore.Usage{}
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

// available is implemented by a store that may not be open yet.
type available interface{ Available() bool }

// registerAvailability reports docket_contentstore_available: 0 while the
// store could not be opened yet (content is then recorded as
// store_unavailable), 1 otherwise.
func registerAvailability(meter metric.Meter, st contentstore.Store) error {
	_, err := meter.Int64ObservableGauge("docket_contentstore_available",
		metric.WithDescription("1 once the content store is open, 0 while the collector runs without it"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			v := int64(1)
			if a, ok := st.(available); ok && !a.Available() {
				v = 0
			}
			o.Observe(v)
			return nil
		}))
	if err != nil {
		return fmt.Errorf("contentstore: create metrics: %w", err)
	}
	return nil
}
