package ledgerexporter

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/hosttest"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/ledgerstorageextension"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// TestWritesToTheLedgerstorageExtension: with `storage: ledgerstorage` the
// exporter writes through the extension's engine and leaves it open for
// the other components when it shuts down.
func TestWritesToTheLedgerstorageExtension(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	ctx := context.Background()
	lsf := ledgerstorageextension.NewFactory()
	lsCfg := lsf.CreateDefaultConfig().(*ledgerstorageextension.Config)
	lsCfg.Embedded = &storageconfig.EmbeddedConfig{Path: filepath.Join(t.TempDir(), "ledger")}
	lsID := component.NewID(lsf.Type())
	ext, err := lsf.Create(ctx, extensiontest.NewNopSettings(lsf.Type()), lsCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err = ext.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ext.Shutdown(ctx) }()

	cfg := createDefaultConfig().(*Config)
	cfg.Storage = storageconfig.Use{Extension: &lsID}
	cfg.QueueConfig = configoptional.None[exporterhelper.QueueBatchConfig]() // written before ConsumeTraces returns
	set := exporter.Settings{ID: component.NewID(componentType), TelemetrySettings: componenttest.NewNopTelemetrySettings(), BuildInfo: component.NewDefaultBuildInfo()}
	exp, err := NewFactory().CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err = exp.Start(ctx, hosttest.Extensions{lsID: ext}); err != nil {
		t.Fatal(err)
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "shared")
	chat(rs.ScopeSpans().AppendEmpty().Spans(), time.Now().UTC(), 1)
	if err = exp.ConsumeTraces(ctx, td); err != nil {
		t.Fatal(err)
	}
	if err = exp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	store := ext.(storageconfig.Provider).LedgerStorage().Store()
	counts, err := store.CountCalls(ctx)
	if err != nil {
		t.Fatalf("the extension's engine after the exporter shut down: %v", err)
	}
	if counts.Calls != 1 {
		t.Fatalf("%+v, want the one call", counts)
	}

	// A storage key naming no extension of the collector is an error at
	// start, not a ledger opened somewhere else.
	missing := component.MustNewIDWithName("ledgerstorage", "missing")
	cfg.Storage = storageconfig.Use{Extension: &missing}
	exp, err = NewFactory().CreateTraces(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err = exp.Start(ctx, hosttest.Extensions{lsID: ext}); err == nil {
		t.Fatal("started with a storage extension the collector does not have")
	}
	_ = exp.Shutdown(ctx)
}
