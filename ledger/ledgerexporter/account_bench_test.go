package ledgerexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"golang.org/x/sys/unix"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// benchBatch is an exporter on a temporary embedded ledger with its own
// account, and a batch of 1,000 call spans of 10 tenants.
func benchBatch(b *testing.B) (*ledgerExporter, ptrace.Traces) {
	ctx := context.Background()
	set := exporter.Settings{ID: component.NewID(componentType), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
	cfg := createDefaultConfig().(*Config)
	cfg.Storage.Embedded = &storageconfig.EmbeddedConfig{Path: filepath.Join(b.TempDir(), "ledger")}
	e, err := newTracesExporter(cfg, set)
	if err != nil {
		b.Fatal(err)
	}
	e.account = completeness.NewAccount()
	if err := e.start(ctx, componenttest.NewNopHost()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = e.shutdown(ctx) })
	td := ptrace.NewTraces()
	now := time.Now().UTC()
	for t := range 10 {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(conventions.TenantAttribute, fmt.Sprintf("tenant-%d", t))
		spans := rs.ScopeSpans().AppendEmpty().Spans()
		for i := range 100 {
			s := chat(spans, now, byte(i))
			s.SetTraceID([16]byte{byte(t), byte(i), 7})
		}
	}
	return e, td
}

// BenchmarkConvertAccount extracts the rows of 1,000 call spans of 10
// tenants with and without counting them in the completeness account (and
// the written count of the batch), so the account's share of the hot path
// shows as the ratio of the two in one run.
func BenchmarkConvertAccount(b *testing.B) {
	ctx := context.Background()
	e, td := benchBatch(b)
	for _, counted := range []bool{false, true} {
		b.Run(fmt.Sprintf("account=%v", counted), func(b *testing.B) {
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := threadCPU(b)
			for b.Loop() {
				c := ctx
				var t tally
				if counted {
					c, t = withTally(ctx)
				}
				req, err := e.convert(c, td)
				if err != nil {
					b.Fatal(err)
				}
				if counted {
					t.record(e.account, completeness.Received, completeness.Flagged)
					e.account.AddAll(req.(*rows).tenants(), completeness.Written)
				}
			}
			b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "thread-cpu-ms/op")
		})
	}
}

// BenchmarkAccountMillionCalls is the completeness account's own work for
// 1M calls in batches of 1,000 spans of 10 tenants, apart from the
// extraction around it (whose time, under load, varies more than the
// account's whole share in BenchmarkConvertAccount): per span, the
// request's tally; per batch, received, flagged and written into the
// account, the written count read from the batch's row keys. One op is
// 1M calls; thread-cpu-ms/op is the CPU time of the benchmark's thread,
// which waiting for a CPU on a busy machine does not add to.
func BenchmarkAccountMillionCalls(b *testing.B) {
	e, td := benchBatch(b)
	req, err := e.convert(context.Background(), td)
	if err != nil {
		b.Fatal(err)
	}
	batch := req.(*rows)
	tenants := make([]string, 0, td.SpanCount())
	for _, rs := range td.ResourceSpans().All() {
		for range rs.ScopeSpans().At(0).Spans().Len() {
			tenants = append(tenants, conventions.Tenant(rs.Resource().Attributes(), e.cfg.DefaultTenant))
		}
	}
	const batches = 1_000_000 / 1000
	b.ReportAllocs()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU(b)
	for b.Loop() {
		for range batches {
			_, t := withTally(context.Background())
			for _, tn := range tenants {
				t.add(tn, completeness.Received)
			}
			t.record(e.account, completeness.Received, completeness.Flagged)
			e.account.AddAll(batch.tenants(), completeness.Written)
		}
	}
	b.ReportMetric(float64(threadCPU(b)-cpu0)/float64(time.Millisecond)/float64(b.N), "thread-cpu-ms/op")
}

// threadCPU is the calling thread's user and system CPU time.
func threadCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
