package ledgerstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/rowbinary"
)

// The rewrite of kept calls after a write, by the number of traces it
// covers, each a new trace of one call (what the ingest benchmark sends):
// its cost is a fixed part per statement (the engine's analysis of the
// provider_calls view) and a part per trace. The process's CPU time per
// statement and per trace is reported beside the wall time, since the
// engine runs in-process on threads of its own.
//
//	go test -run '^$' -bench RefreshCalls ./ledger/ledgerstore
func BenchmarkRefreshCalls(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 300, 2400} {
		b.Run(fmt.Sprintf("traces=%d", n), func(b *testing.B) {
			var cpu time.Duration
			for b.Loop() {
				b.StopTimer()
				traces := make([]string, n)
				calls := make([]ledger.Call, n)
				for i := range calls {
					traces[i] = fmt.Sprintf("%032x", rand.Uint64())
					calls[i] = refreshCall(traces[i])
				}
				rows, err := rowbinary.EncodeCalls(nil, calls)
				if err != nil {
					b.Fatal(err)
				}
				if err = testStore.insertRows(ctx, "insert_llm_calls", "RowBinary", n, rows); err != nil {
					b.Fatal(err)
				}
				cpu0 := proctest.SelfCPU()
				b.StartTimer()
				if err := testStore.RefreshCalls(ctx, traces); err != nil {
					b.Fatal(err)
				}
				cpu += proctest.SelfCPU() - cpu0
			}
			perStatement := cpu / time.Duration(b.N)
			b.ReportMetric(float64(perStatement.Microseconds()), "cpu-µs/op")
			b.ReportMetric(float64(perStatement.Microseconds())/float64(n), "cpu-µs/trace")
		})
	}
}
