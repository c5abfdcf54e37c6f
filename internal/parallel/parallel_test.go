package parallel

import (
	"sync/atomic"
	"testing"
)

func TestForRunsEachIterationOnceWithinTheBound(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {7, 3}, {100, 16}, {5, 50}} {
		counts := make([]atomic.Int32, tc.n)
		var running, peak atomic.Int32
		For(tc.n, tc.workers, func(i int) {
			r := running.Add(1)
			for p := peak.Load(); r > p && !peak.CompareAndSwap(p, r); p = peak.Load() {
			}
			counts[i].Add(1)
			running.Add(-1)
		})
		for i := range counts {
			if c := counts[i].Load(); c != 1 {
				t.Errorf("n=%d workers=%d: iteration %d ran %d times", tc.n, tc.workers, i, c)
			}
		}
		if p := int(peak.Load()); p > tc.workers {
			t.Errorf("n=%d workers=%d: %d ran at once", tc.n, tc.workers, p)
		}
	}
}
