package providers

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Retry is the one retry policy of all provider clients: bounded attempts,
// exponential backoff with full jitter, and the provider's Retry-After
// honoured. The zero value is usable.
type Retry struct {
	// MaxAttempts counts every attempt, the first included. 0 means 4.
	MaxAttempts int
	// BaseDelay is the backoff ceiling after the first failure; it doubles
	// with each further failure. 0 means 500ms.
	BaseDelay time.Duration
	// MaxDelay caps a backoff delay, and is the longest Retry-After honoured:
	// a provider asking for a longer wait ends the retries instead of being
	// called early. 0 means 30s.
	MaxDelay time.Duration
	// Rand returns a number in [0, 1) for the jitter. Nil means math/rand/v2.
	Rand func() float64
	// Sleep waits d or until ctx ends. Nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// retryable is implemented by errors that say whether another attempt may
// succeed and how long the provider asked to wait first.
type retryable interface {
	Temporary() bool
	RetryAfter() time.Duration // 0 when the provider did not say
}

// Do runs op until it succeeds, fails with an error that is not temporary,
// the attempts are used up, or ctx ends. It returns the number of attempts
// made and op's last error.
func (r Retry) Do(ctx context.Context, op func(context.Context) error) (attempts int, err error) {
	r = r.withDefaults()
	for attempts = 1; ; attempts++ {
		err = op(ctx)
		if err == nil {
			return attempts, nil
		}
		if ctx.Err() != nil {
			return attempts, err
		}
		var t retryable
		if !errors.As(err, &t) || !t.Temporary() || attempts >= r.MaxAttempts {
			return attempts, err
		}
		delay, ok := r.delay(attempts, t.RetryAfter())
		if !ok {
			return attempts, err
		}
		if sleepErr := r.Sleep(ctx, delay); sleepErr != nil {
			return attempts, err
		}
	}
}

func (r Retry) withDefaults() Retry {
	if r.MaxAttempts <= 0 {
		r.MaxAttempts = 4
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = 500 * time.Millisecond
	}
	if r.MaxDelay <= 0 {
		r.MaxDelay = 30 * time.Second
	}
	if r.Rand == nil {
		r.Rand = rand.Float64
	}
	if r.Sleep == nil {
		r.Sleep = sleep
	}
	return r
}

// delay is the wait before attempt failures+1: a uniformly random time up
// to the exponential ceiling ("full jitter"), but never less than the
// provider's Retry-After. ok is false when Retry-After exceeds MaxDelay.
func (r Retry) delay(failures int, retryAfter time.Duration) (time.Duration, bool) {
	if retryAfter > r.MaxDelay {
		return 0, false
	}
	ceiling := r.MaxDelay
	if shift := failures - 1; shift < 30 && r.BaseDelay<<shift < r.MaxDelay {
		ceiling = r.BaseDelay << shift
	}
	d := time.Duration(r.Rand() * float64(ceiling))
	return max(d, retryAfter), true
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
