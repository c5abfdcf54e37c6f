package ledgerexporter

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// BenchmarkConvertAccount extracts the rows of 1,000 call spans of 10
// tenants with and without counting them in the completeness account (and
// the written count of the batch), so the account's share of the hot path
// shows as the ratio of the two in one run.
func BenchmarkConvertAccount(b *testing.B) {
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
	defer func() { _ = e.shutdown(ctx) }()
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
	for _, counted := range []bool{false, true} {
		b.Run(fmt.Sprintf("account=%v", counted), func(b *testing.B) {
			b.ReportAllocs()
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
		})
	}
}
