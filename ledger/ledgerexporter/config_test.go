package ledgerexporter

import (
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/docketlabs/docket/internal/configtest"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	return configtest.Load(t, component.NewIDWithName(componentType, name).String(), createDefaultConfig().(*Config), nil)
}

func TestEmptyConfigIsValidEmbeddedDefault(t *testing.T) {
	cfg := loadConfig(t, "")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatalf("empty config: %v", err)
	}
	if got := cfg.Storage.EmbeddedPath(); got != filepath.Join("data", "ledger") {
		t.Fatalf("embedded path %q", got)
	}
	if cfg.RetryConfig.MaxElapsedTime != 0 || cfg.QueueConfig.Get().BlockOnOverflow {
		t.Fatal("defaults must retry forever and answer a full queue at once instead of blocking")
	}
	// Without batching every request would be an insert of its own.
	q := cfg.QueueConfig.Get()
	if !q.Batch.HasValue() || q.Batch.Get().MinSize != 20_000 || q.Batch.Get().MaxSize != 50_000 || q.Sizer != exporterhelper.RequestSizerTypeItems {
		t.Fatalf("default queue does not batch big inserts: %+v", q)
	}
}

func TestServerConfig(t *testing.T) {
	cfg := loadConfig(t, "server")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Storage.ClickHouse == nil || cfg.Storage.EmbeddedPath() != "" || cfg.DefaultTenant != "shared" || cfg.QueueConfig.Get().StorageID == nil {
		t.Fatalf("server config not applied: %+v", cfg)
	}
}

// The tenant is read from the contract's attribute only, the one the
// tenant processor stamps: a configured attribute (one a sender could set)
// is refused by name.
func TestTenantAttributeIsNotConfigurable(t *testing.T) {
	err := configtest.Section(t, component.NewIDWithName(componentType, "tenant_attribute").String()).Unmarshal(createDefaultConfig())
	if err == nil || !strings.Contains(err.Error(), "tenant_attribute") {
		t.Fatalf("tenant_attribute accepted or refused without naming it: %v", err)
	}
}

func TestInvalidConfigs(t *testing.T) {
	for _, name := range []string{"bounded_retry", "two_engines", "blocking_queue", "fractional_retry_after", "no_disk_reserve", "no_clock_window"} {
		if err := confmap.Validate(loadConfig(t, name)); err == nil {
			t.Errorf("%s: config accepted, want an error", name)
		}
	}
}
