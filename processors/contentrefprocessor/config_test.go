package contentrefprocessor

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/docketlabs/docket/internal/configtest"
	"github.com/docketlabs/docket/processors/contentrefprocessor/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	return configtest.Load(t, component.NewIDWithName(metadata.Type, name).String(), defaultConfig(), nil)
}

func TestEmptyConfig(t *testing.T) {
	cfg := loadConfig(t, "")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Store != nil || !cfg.Capture || cfg.DefaultTenant != "default" || cfg.UnknownKeys != UnknownStore || cfg.UnknownKeysScope != ScopeGenAI {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestPolicyConfig(t *testing.T) {
	cfg := loadConfig(t, "policy")
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.Store == nil || cfg.Store.String() != "contentstore/s3" || cfg.WriteConcurrency != 16 || cfg.UnknownKeys != UnknownDrop || len(cfg.MetadataKeys) != 2 || cfg.UnknownKeysScope != ScopeAll {
		t.Fatalf("not applied: %+v", cfg)
	}
	for _, tc := range []struct {
		tenant, service string
		want            bool
	}{
		{"acme", "chatbot", true},
		{"acme", "hr-assistant", true}, // first matching rule wins
		{"globex", "chatbot", false},
	} {
		if got := cfg.captures(tc.tenant, tc.service); got != tc.want {
			t.Errorf("captures(%s, %s) = %v", tc.tenant, tc.service, got)
		}
		if m := cfg.metadataKeys(tc.tenant, tc.service); !m["app.feature"] || m["acme.ticket_id"] != (tc.tenant == "acme" && tc.service == "chatbot") {
			t.Errorf("metadataKeys(%s, %s) = %v", tc.tenant, tc.service, m)
		}
	}
}

// The tenant is read from the contract's attribute only, the one the
// tenant processor stamps: a configured attribute is refused by name.
func TestTenantAttributeIsNotConfigurable(t *testing.T) {
	sub := configtest.Section(t, component.NewIDWithName(metadata.Type, "tenant_attribute").String())
	if err := sub.Unmarshal(defaultConfig()); err == nil || !strings.Contains(err.Error(), "tenant_attribute") {
		t.Fatalf("tenant_attribute accepted or refused without naming it: %v", err)
	}
}

func TestInvalidConfigs(t *testing.T) {
	for _, name := range []string{"rule_matches_everything", "rule_without_capture", "no_concurrency", "bad_default_tenant", "bad_unknown_keys", "content_key_as_metadata", "metadata_rule_matches_everything", "bad_unknown_keys_scope"} {
		if err := confmap.Validate(loadConfig(t, name)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
