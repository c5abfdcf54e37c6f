package contentstore

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// writeTimes remembers how long the store's recent writes took, to make a
// Put of content already stored take as long: a duration drawn from the
// recent writes follows their distribution, tail included.
type writeTimes struct {
	mu   sync.Mutex
	ring [64]time.Duration
	n    int // writes observed
}

func (w *writeTimes) observe(d time.Duration) {
	w.mu.Lock()
	w.ring[w.n%len(w.ring)] = d
	w.n++
	w.mu.Unlock()
}

// sample returns the duration of one recent write, or 0 before the first.
func (w *writeTimes) sample() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		return 0
	}
	return w.ring[rand.IntN(min(w.n, len(w.ring)))]
}

// wait sleeps for the duration of a recent write, or until ctx ends.
func (w *writeTimes) wait(ctx context.Context) {
	d := w.sample()
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
