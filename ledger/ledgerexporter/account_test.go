package ledgerexporter

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// TestAccountCountsRefusedNotReceived: while the ledger cannot be written
// the queue fills; the requests it refuses with a retry delay are counted
// as refused, never as received, and nothing counts as written.
func TestAccountCountsRefusedNotReceived(t *testing.T) {
	ctx := context.Background()
	blocker := filepath.Join(t.TempDir(), "not-a-directory")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := createDefaultConfig().(*Config)
	cfg.Storage.Embedded = &storageconfig.EmbeddedConfig{Path: filepath.Join(blocker, "ledger")}
	q := cfg.QueueConfig.Get()
	q.QueueSize, q.NumConsumers = 4, 1
	set := exporter.Settings{ID: component.NewID(componentType), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
	exp, err := NewFactory().CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	const tenant = "account-refused"
	now := time.Now().UTC()
	var accepted, refused int64
	for i := 0; refused < 3 && i < 1000; i++ {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(conventions.TenantAttribute, tenant)
		chat(rs.ScopeSpans().AppendEmpty().Spans(), now, byte(i))
		err := exp.ConsumeTraces(ctx, td)
		switch {
		case err == nil:
			accepted++
		case status.Code(errors.Unwrap(err)) == codes.ResourceExhausted || status.Code(err) == codes.ResourceExhausted:
			refused++
		default:
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if refused == 0 {
		t.Fatal("the queue never filled")
	}
	got := completeness.Process.Snapshot(func(t string) bool { return t == tenant }).Tenants
	if len(got) != 1 {
		t.Fatalf("account %+v", got)
	}
	c := got[0].Counts
	if c[completeness.Received] != accepted || c[completeness.RefusedRetry] != refused || c[completeness.Written] != 0 || got[0].Pending != accepted {
		t.Errorf("accepted %d, refused %d; account %+v", accepted, refused, got[0])
	}
	if err := exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
