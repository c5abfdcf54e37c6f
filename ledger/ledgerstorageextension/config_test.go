package ledgerstorageextension

import (
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/docketlabs/docket/ledger/ledgerstorageextension/internal/metadata"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	if err != nil {
		t.Fatal(err)
	}
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestConfigs(t *testing.T) {
	for name, want := range map[string]string{
		"":         "embedded " + storageconfig.DefaultEmbeddedPath,
		"embedded": "embedded /var/lib/docket/ledger",
		"cluster":  "cluster docket",
	} {
		cfg := loadConfig(t, name)
		if err := confmap.Validate(cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := "embedded " + cfg.EmbeddedPath()
		if cfg.ClickHouse != nil {
			got = "cluster " + cfg.ClickHouse.Cluster
		}
		if got != want {
			t.Errorf("%q: %s, want %s", name, got, want)
		}
	}
}

func TestBadConfigsAreRefused(t *testing.T) {
	for name, want := range map[string]string{
		"both":        "choose one of embedded and clickhouse",
		"native_dsn":  "HTTP interface",
		"bad_cluster": "not a plain identifier",
	} {
		err := confmap.Validate(loadConfig(t, name))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, want)
		}
	}
}
