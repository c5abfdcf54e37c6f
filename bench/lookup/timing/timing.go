// Package timing measures the latency of an operation repeated one call at a
// time — a lookup through the store, or the same lookup as an HTTP round
// trip — and summarises it by percentiles.
package timing

import (
	"fmt"
	"math"
	"slices"
	"syscall"
	"time"
)

// Stats summarise n timed calls.
type Stats struct {
	Name          string
	N             int
	P50, P95, Max time.Duration
	// CPU is the process's CPU time (user and system) per call, averaged
	// over the n calls: steadier than wall time on a shared machine, and
	// it covers the engine, which runs in-process (with whatever it did
	// in the background meanwhile, such as merges).
	CPU time.Duration
}

// Measure calls fn(0) … fn(n-1) one after another, timing each call, and
// returns the percentiles of the durations. It stops at the first error.
func Measure(name string, n int, fn func(i int) error) (Stats, error) {
	if n <= 0 {
		return Stats{}, fmt.Errorf("timing: %s: need at least one call", name)
	}
	d := make([]time.Duration, n)
	cpu0, err := processCPU()
	if err != nil {
		return Stats{}, err
	}
	for i := range d {
		start := time.Now()
		if err = fn(i); err != nil {
			return Stats{}, fmt.Errorf("timing: %s, call %d: %w", name, i, err)
		}
		d[i] = time.Since(start)
	}
	cpu1, err := processCPU()
	if err != nil {
		return Stats{}, err
	}
	slices.Sort(d)
	return Stats{Name: name, N: n, P50: Percentile(d, 50), P95: Percentile(d, 95), Max: d[n-1], CPU: (cpu1 - cpu0) / time.Duration(n)}, nil
}

// processCPU is the user and system CPU time this process has used.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("timing: getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// Percentile is the nearest-rank percentile p (0 < p ≤ 100) of sorted
// durations: the smallest one that at least p% of them do not exceed.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	// The epsilon keeps a product such as 500 × 0.95 from rounding up a rank.
	rank := int(math.Ceil(float64(len(sorted))*p/100-1e-9)) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

// Millis formats a duration in milliseconds with a precision that suits it.
func Millis(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	switch {
	case ms < 10:
		return fmt.Sprintf("%.2f ms", ms)
	case ms < 1000:
		return fmt.Sprintf("%.1f ms", ms)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
