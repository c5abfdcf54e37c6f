package contentstore

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Backoff of the breaker while a store is unavailable.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// breaker fails calls fast while a remote store is unavailable, so that a
// down S3 server costs the pipeline one failed request per backoff period
// instead of one timeout per content item. After the backoff one call
// probes the store; concurrent callers wait for that probe's verdict rather
// than failing, so a batch sees the store either up or down, not both.
type breaker struct {
	logger *zap.Logger

	mu        sync.Mutex
	openUntil time.Time // zero while the store is available
	backoff   time.Duration
	probe     chan struct{} // closed when the running probe ends
}

func newBreaker(logger *zap.Logger) *breaker { return &breaker{logger: logger} }

func (b *breaker) call(ctx context.Context, op func() error) error {
	for {
		b.mu.Lock()
		switch {
		case b.openUntil.IsZero():
			b.mu.Unlock()
			return b.record(op(), false)
		case time.Now().Before(b.openUntil):
			b.mu.Unlock()
			return ErrUnavailable
		case b.probe != nil:
			p := b.probe
			b.mu.Unlock()
			select {
			case <-p:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		p := make(chan struct{})
		b.probe = p
		b.mu.Unlock()
		err := b.record(op(), true)
		b.mu.Lock()
		b.probe = nil
		b.mu.Unlock()
		close(p)
		return err
	}
}

// record updates the state from a call's result.
func (b *breaker) record(err error, probe bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if errors.Is(err, ErrUnavailable) {
		switch {
		case b.openUntil.IsZero():
			b.backoff = minBackoff
			b.logger.Warn("content store unavailable; content is recorded as store_unavailable until it returns", zap.Error(err))
		case probe:
			b.backoff = min(2*b.backoff, maxBackoff)
		default:
			return err // a call that started before the breaker opened
		}
		b.openUntil = time.Now().Add(b.backoff)
		return err
	}
	if probe {
		b.openUntil = time.Time{}
		b.logger.Info("content store available again")
	}
	return err
}
