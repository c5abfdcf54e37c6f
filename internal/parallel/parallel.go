// Package parallel runs the iterations of a loop on a bounded number of
// goroutines.
package parallel

import (
	"sync"
	"sync/atomic"
)

// For runs fn for 0..n-1 on at most workers goroutines and returns when
// all have returned. A single iteration runs on the caller's goroutine.
func For(n, workers int, fn func(i int)) {
	if n == 1 {
		fn(0)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
}
