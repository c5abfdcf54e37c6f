package contentstoreextension

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/extension/extensiontest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoreextension/internal/metadata"
	"github.com/docketlabs/docket/internal/s3test"
)

var ctx = context.Background()

func start(t *testing.T, cfg *Config, reader sdkmetric.Reader) *storeExtension {
	t.Helper()
	set := extensiontest.NewNopSettings(metadata.Type)
	if reader != nil {
		set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	}
	ext, err := NewFactory().Create(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(ctx, componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	return ext.(*storeExtension)
}

// With the empty config the extension runs the embedded store under ./data
// and generates a deployment secret there, kept across restarts.
func TestEmptyConfigRunsEmbeddedStore(t *testing.T) {
	t.Chdir(t.TempDir())
	reader := sdkmetric.NewManualReader()
	ext := start(t, NewFactory().CreateDefaultConfig().(*Config), reader)
	first, err := ext.ContentStore().Put(ctx, "default", "input.messages", []byte(`[{"role":"user"}]`))
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, reader)
	if got["otelcol_extension_contentstore_accepted_bytes"] != first.Size || got["otelcol_extension_contentstore_max_total_bytes"] != contentstore.DefaultMaxTotalBytes {
		t.Fatalf("metrics %v", got)
	}
	if err := ext.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join("data", "content.secret"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file: %v %v", fi, err)
	}
	if segs, err := filepath.Glob(filepath.Join("data", "content", ".segments", "*.seg")); err != nil || len(segs) == 0 {
		t.Fatalf("objects not under ./data/content: %v %v", segs, err)
	}

	again := start(t, NewFactory().CreateDefaultConfig().(*Config), nil)
	defer again.Shutdown(ctx)
	second, err := again.ContentStore().Put(ctx, "default", "input.messages", []byte(`[ {"role": "user"} ]`))
	if err != nil || second.Ref != first.Ref || second.Created {
		t.Fatalf("after restart the same content has another address: %+v %v (was %s)", second, err, first.Ref)
	}
}

// collect reads the extension's metrics, which carry no labels.
func collect(t *testing.T, reader sdkmetric.Reader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var dps []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				dps = d.DataPoints
			case metricdata.Sum[int64]:
				dps = d.DataPoints
			default:
				t.Fatalf("%s: unexpected type %T", m.Name, m.Data)
			}
			for _, dp := range dps {
				if dp.Attributes.Len() != 0 {
					t.Errorf("%s has labels %v", m.Name, dp.Attributes)
				}
				got[m.Name] = dp.Value
			}
		}
	}
	return got
}

// TestMetricsDoNotTellStoredFromNew: whoever reads the metrics must not
// learn whether a message was already stored. Storing a message again moves
// every metric exactly as storing a new message of the same size does.
func TestMetricsDoNotTellStoredFromNew(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	cfg.Directory = configoptional.Some(contentstore.DirConfig{Path: filepath.Join(t.TempDir(), "content")})
	cfg.Secret = "a-deployment-secret-of-at-least-32-bytes"
	ext := start(t, cfg, reader)
	defer ext.Shutdown(ctx)
	st := ext.ContentStore()
	put := func(msg string) map[string]int64 {
		if _, err := st.Put(ctx, "acme", "input.messages", []byte(msg)); err != nil {
			t.Fatal(err)
		}
		return collect(t, reader)
	}
	before := put("is my account 4711 closed?")
	known := put("is my account 4711 closed?")
	fresh := put("is my account 4712 closed?")
	for name := range fresh {
		if dKnown, dNew := known[name]-before[name], fresh[name]-known[name]; dKnown != dNew {
			t.Errorf("%s moved by %d for a stored message and by %d for a new one", name, dKnown, dNew)
		}
	}
	if len(fresh) != len(known) {
		t.Errorf("metrics appeared or vanished: %v vs %v", known, fresh)
	}
}

func TestS3Backend(t *testing.T) {
	srv := s3test.Start(t)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	s3 := cfg.S3.GetOrInsertDefault()
	s3.Endpoint, s3.Bucket, s3.AccessKey, s3.SecretKey, s3.Insecure = srv.Endpoint, "ext-test", srv.AccessKey, configopaque.String(srv.SecretKey), true
	cfg.Directory = configoptional.None[contentstore.DirConfig]()
	cfg.Secret = "a-deployment-secret-of-at-least-32-bytes"
	ext := start(t, cfg, nil)
	defer ext.Shutdown(ctx)
	r, err := ext.ContentStore().Put(ctx, "acme", "output.messages", []byte("hello"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.ContentStore().SetLegalHold(ctx, r.Ref, true); err != nil {
		t.Fatalf("legal hold on the bucket the extension created: %v", err)
	}
	if err := ext.ContentStore().Delete(ctx, r.Ref); err == nil {
		t.Fatal("held object deleted")
	}
}
