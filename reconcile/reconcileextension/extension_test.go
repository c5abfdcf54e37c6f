package reconcileextension

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/internal/configtest"
	"github.com/docketlabs/docket/internal/hosttest"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstorageextension"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/reconcile"
	"github.com/docketlabs/docket/reconcile/reconcileextension/internal/metadata"
)

func load(t *testing.T, id string) *Config {
	t.Helper()
	return configtest.Load(t, id, createDefaultConfig().(*Config), nil)
}

func TestConfigValidation(t *testing.T) {
	if err := createDefaultConfig().(*Config).Validate(); err != nil {
		t.Errorf("default config: %v", err)
	}
	if err := load(t, "reconcile").Validate(); err != nil {
		t.Errorf("example config: %v", err)
	}
	for _, id := range []string{"reconcile/bad_provider", "reconcile/too_often", "reconcile/twice"} {
		if err := load(t, id).Validate(); err == nil {
			t.Errorf("%s was accepted", id)
		}
	}
}

// TestPullsReconcilesAndExportsMetrics starts the extension against the
// fake provider's admin endpoints over HTTP and the embedded ledger of a
// ledgerstorage extension it names: its first run imports both reports
// and its gauges show the missing call.
func TestPullsReconcilesAndExportsMetrics(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	ctx := context.Background()
	dir := t.TempDir()
	storageID := component.MustNewID("ledgerstorage")
	host := hosttest.Extensions{storageID: startStorage(t, filepath.Join(dir, "ledger"))}
	store := host[storageID].(storageconfig.Provider).LedgerStorage().Store()

	today := time.Now().UTC()
	s, _ := fakeprovider.New(fakeprovider.Config{})
	u, _ := fakeprovider.NewUsage(s, fakeprovider.UsageConfig{AdminKey: "admin-x", Keys: map[string]fakeprovider.KeyInfo{"sk-a": {ID: "key_a", Project: "p"}}})
	srv := httptest.NewServer(u)
	defer srv.Close()
	var calls []ledger.Call
	for i := 0; i < 10; i++ {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk-a")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if i > 0 { // the first call never reached the ledger
			in, out, cached := int64(8), int64(0), int64(0)
			calls = append(calls, ledger.Call{Tenant: "t", TraceID: strings.Repeat("cd", 15) + "0" + string(rune('0'+i)), SpanID: "b7ad6b7169203331",
				ServiceName: "checkout", StartTime: today, EndTime: today, Provider: usage.ProviderOpenAI, ResponseModel: "gpt-4o-2024-08-06",
				InputTokens: &in, OutputTokens: &out, CacheReadTokens: &cached, Status: ledger.StatusOK})
		}
	}
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "admin.key")
	if err := os.WriteFile(keyFile, []byte("admin-x"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := load(t, "reconcile")
	if cfg.Storage.Extension == nil || *cfg.Storage.Extension != storageID {
		t.Fatalf("storage %+v, want the extension %s", cfg.Storage, storageID)
	}
	for i := range cfg.Providers {
		cfg.Providers[i].BaseURL, cfg.Providers[i].AdminKeyFile = srv.URL, keyFile
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	reader := sdkmetric.NewManualReader()
	set := extensiontest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = componenttest.NewNopTelemetrySettings()
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ext, err := NewFactory().Create(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if deps := ext.(interface{ Dependencies() []component.ID }).Dependencies(); len(deps) != 1 || deps[0] != storageID {
		t.Fatalf("dependencies %v, want the storage extension", deps)
	}
	if err := ext.Start(ctx, host); err != nil {
		t.Fatal(err)
	}
	defer ext.Shutdown(ctx)

	var drift *float64
	var missing int64
	deadline := time.Now().Add(30 * time.Second)
	for drift == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(ctx, &rm); err != nil {
			t.Fatal(err)
		}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Gauge[float64]:
					for _, p := range d.DataPoints {
						measure, _ := p.Attributes.Value("measure")
						key, _ := p.Attributes.Value("api_key_id")
						if m.Name == "otelcol_extension_reconcile_drift_percent" && measure.AsString() == "requests" && key.AsString() == "key_a" {
							v := p.Value
							drift = &v
						}
					}
				case metricdata.Gauge[int64]:
					for _, p := range d.DataPoints {
						if st, _ := p.Attributes.Value("state"); st.AsString() == reconcile.StateLedgerMissing {
							missing = p.Value
						}
					}
				}
			}
		}
	}
	if drift == nil || *drift != -10 || missing != 1 {
		t.Fatalf("drift %v, missing cells %d: want -10%% and 1", drift, missing)
	}
	imports, err := usage.Imports(ctx, store, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) != 2 || !strings.HasPrefix(imports[0].Actor, "collector reconcile") {
		t.Errorf("imports: %+v", imports)
	}
}

func TestMissingAdminKeyFailsStart(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Providers = []ProviderConfig{{Provider: usage.ProviderAnthropic}}
	t.Setenv(usage.AdminKeyEnv[usage.ProviderAnthropic], "")
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err == nil || !strings.Contains(err.Error(), "ANTHROPIC_ADMIN_KEY") {
		t.Errorf("start without a key: %v", err)
	}
}

// startStorage starts a ledgerstorage extension on the embedded engine in
// dir, shut down when the test ends.
func startStorage(t *testing.T, dir string) component.Component {
	t.Helper()
	ctx := context.Background()
	f := ledgerstorageextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*ledgerstorageextension.Config)
	cfg.Embedded = &storageconfig.EmbeddedConfig{Path: dir}
	ext, err := f.Create(ctx, extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err = ext.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Shutdown(ctx) })
	return ext
}

// TestStorageByExtensionOrInline: a storage key naming an extension the
// host lacks fails the start; an engine configured inline still opens,
// with the deprecation warning, and is this extension's to close.
func TestStorageByExtensionOrInline(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	ctx := context.Background()
	cfg := load(t, "reconcile")
	cfg.Providers = nil
	ext, err := NewFactory().Create(ctx, extensiontest.NewNopSettings(metadata.Type), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err = ext.Start(ctx, componenttest.NewNopHost()); err == nil || !strings.Contains(err.Error(), "ledgerstorage extension ledgerstorage is not in service.extensions") {
		t.Fatalf("start without the storage extension: %v", err)
	}

	inline := load(t, "reconcile/inline")
	if inline.Storage.Extension != nil || inline.Storage.Embedded == nil {
		t.Fatalf("storage %+v, want an inline embedded engine", inline.Storage)
	}
	inline.Storage.Embedded.Path = filepath.Join(t.TempDir(), "ledger")
	core, logs := observer.New(zap.InfoLevel)
	set := extensiontest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	ext, err = NewFactory().Create(ctx, set, inline)
	if err != nil {
		t.Fatal(err)
	}
	if err = ext.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	r := ext.(*reconcileExtension).ledger
	if logs.FilterMessage(storageconfig.Deprecation).Len() != 1 || !r.State().Available {
		t.Errorf("inline storage: deprecation logged %d times, ledger %+v", logs.FilterMessage(storageconfig.Deprecation).Len(), r.State())
	}
	if err = ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if r.Underlying() != nil {
		t.Error("the extension's own engine is still open after shutdown")
	}
}
