package contentstoreextension

import (
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoreextension/internal/metadata"
	"github.com/docketlabs/docket/internal/configtest"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	return configtest.Load(t, component.NewIDWithName(metadata.Type, name).String(), createDefaultConfig().(*Config), nil)
}

func TestEmptyConfigIsTheEmbeddedDirectoryStore(t *testing.T) {
	cfg := loadConfig(t, "")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.S3.HasValue() || cfg.MaxTotalBytes != contentstore.DefaultMaxTotalBytes || cfg.MaxObjectBytes != contentstore.DefaultMaxObjectBytes {
		t.Fatalf("empty config is not the bounded directory default: %+v", cfg.Config)
	}
	if got, want := cfg.SecretPath(), filepath.Join("data", "content.secret"); got != want {
		t.Fatalf("secret path %q, want %q", got, want)
	}
}

func TestS3Config(t *testing.T) {
	cfg := loadConfig(t, "s3")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	s := cfg.S3.Get()
	if s == nil || s.Bucket != "docket-content" || s.Prefix != "prod/" || s.Insecure {
		t.Fatalf("s3 not applied: %+v", s)
	}
	// Unset fields keep their defaults: create the bucket with Object Lock.
	if !s.CreateBucket || !s.ObjectLock || s.Timeout != 10*time.Second {
		t.Fatalf("s3 defaults lost: %+v", s)
	}
	if cfg.MaxTotalBytes != 100<<30 || cfg.MaxTenantBytes != 10<<30 || cfg.TenantQuotas["acme"] != 50<<30 {
		t.Fatalf("quotas %d %d %v", cfg.MaxTotalBytes, cfg.MaxTenantBytes, cfg.TenantQuotas)
	}
}

func TestDirConfig(t *testing.T) {
	cfg := loadConfig(t, "dir")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	d := cfg.Directory.Get()
	if d == nil || d.Path != "/var/lib/docket/content" || d.Fsync || cfg.SecretPath() != "/etc/docket/content.secret" {
		t.Fatalf("directory not applied: %+v %q", d, cfg.SecretPath())
	}
}

func TestInvalidConfigs(t *testing.T) {
	for _, name := range []string{"both", "short_secret", "unbounded", "s3_without_keys", "object_over_quota", "tenant_over_total", "bad_tenant_quota"} {
		if err := confmap.Validate(loadConfig(t, name)); err == nil {
			t.Errorf("%s: accepted, want an error", name)
		}
	}
}
