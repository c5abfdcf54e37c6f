package audit

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
)

// insertBulk writes n calls for tenant in batches.
func insertBulk(t testing.TB, tenant string, n int) {
	t.Helper()
	const batch = 20000
	calls := make([]ledger.Call, 0, batch)
	for i := 0; i < n; i++ {
		c := newCall(tenant, i)
		c.SpanName = fmt.Sprintf("chat %d, \"step\"\n", i%97)
		c.RequestParams = map[string]string{"user": fmt.Sprintf("u-%d", i%1000)}
		if i%10 == 0 {
			c.CostUSD, c.CostStatus = nil, "unknown_model"
		}
		calls = append(calls, c)
		if len(calls) == batch || i == n-1 {
			insert(t, calls)
			calls = calls[:0]
		}
	}
}

// peakHeap samples the live heap while fn runs and returns the highest
// sample above the heap before fn.
func peakHeap(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := base
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				var s runtime.MemStats
				runtime.ReadMemStats(&s)
				peak = max(peak, s.HeapAlloc)
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak - base
}

func TestExportStreamsRows(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 rows")
	}
	const tenant, n = "bulk", 200000
	insertBulk(t, tenant, n)
	ctx := context.Background()
	// Held in memory, the rows would take well over 150 MiB (about 1 KiB
	// of JSON each); streamed, the heap stays near the buffers' size.
	const bound = 48 << 20
	var heads []string
	for _, f := range []Format{FormatJSONL, FormatCSV, FormatParquet} {
		dir := filepath.Join(t.TempDir(), "bundle")
		var m Manifest
		var err error
		start := time.Now()
		req := request(tenant, f)
		req.To = day0.AddDate(0, 0, 30)
		grew := peakHeap(func() { m, err = Export(ctx, store, auditor(tenant), req, dir) })
		took := time.Since(start)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if m.Files[0].Rows != n || m.Totals.CostUSD.UnknownRows != n/10 || m.Totals.CostUSD.Total != "18 +?" {
			t.Fatalf("%s: %d rows, cost %+v", f, m.Files[0].Rows, m.Totals.CostUSD)
		}
		if grew > bound {
			t.Errorf("%s: export grew the heap by %d MiB", f, grew>>20)
		}
		var verr error
		vgrew := peakHeap(func() { _, verr = Verify(ctx, dir, engineOnly(store.Engine())) })
		if verr != nil {
			t.Fatalf("%s: verify: %v", f, verr)
		}
		if vgrew > bound {
			t.Errorf("%s: verify grew the heap by %d MiB", f, vgrew>>20)
		}
		t.Logf("%s: %d rows in %v (%.0f rows/s), %d bytes, heap +%d MiB (verify +%d MiB)", f, n, took.Round(time.Millisecond), n/took.Seconds(), m.Files[0].Bytes, grew>>20, vgrew>>20)
		heads = append(heads, m.Files[0].ChainHead)
	}
	if heads[0] != heads[1] || heads[1] != heads[2] {
		t.Errorf("chain heads differ between formats: %q", heads)
	}
}

var benchOnce sync.Once

// BenchmarkExport measures export throughput per format over 50,000 calls.
func BenchmarkExport(b *testing.B) {
	const tenant, n = "bench", 50000
	benchOnce.Do(func() { insertBulk(b, tenant, n) })
	ctx := context.Background()
	for _, f := range []Format{FormatJSONL, FormatCSV, FormatParquet} {
		b.Run(string(f), func(b *testing.B) {
			for b.Loop() {
				if _, err := Export(ctx, store, auditor(tenant), request(tenant, f), filepath.Join(b.TempDir(), "bundle")); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkVerify measures verification throughput per format.
func BenchmarkVerify(b *testing.B) {
	const tenant, n = "bench", 50000
	benchOnce.Do(func() { insertBulk(b, tenant, n) })
	ctx := context.Background()
	for _, f := range []Format{FormatJSONL, FormatCSV, FormatParquet} {
		b.Run(string(f), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "bundle")
			if _, err := Export(ctx, store, auditor(tenant), request(tenant, f), dir); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := Verify(ctx, dir, engineOnly(store.Engine())); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
