package lifecycleextension

import (
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/docketlabs/docket/ledger/lifecycle/lifecycleextension/internal/metadata"
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

func TestConfigFiles(t *testing.T) {
	def := loadConfig(t, "")
	if def.Validate() != nil || def.Storage.String() != "ledgerstorage" || def.ContentStore.String() != "contentstore" || def.Interval != time.Hour {
		t.Fatalf("default: %+v", def)
	}
	r := loadConfig(t, "replicas")
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Storage.String() != "ledgerstorage/cluster" || r.ContentStore.String() != "contentstore/s3" || r.Lease.TTL != time.Minute ||
		r.Retention.For("acme").ContentDays != 7 || r.Retention.For("other").LedgerDays != 365 {
		t.Fatalf("replicas: %+v", r)
	}
	if loadConfig(t, "slow_renewal").Validate() == nil {
		t.Fatal("a renewal interval over half the TTL was accepted")
	}
}
