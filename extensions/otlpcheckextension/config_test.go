package otlpcheckextension

import (
	"context"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/docketlabs/docket/extensions/otlpcheckextension/internal/metadata"
)

func TestConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]Config{
		"otlpcheck":               {},
		"otlpcheck/authenticated": {Authenticator: component.MustNewID("tenantauth")},
	} {
		sub, err := cm.Sub(id)
		if err != nil {
			t.Fatal(err)
		}
		cfg := NewFactory().CreateDefaultConfig()
		if err := sub.Unmarshal(cfg); err != nil {
			t.Fatal(err)
		}
		if err := confmap.Validate(cfg); err != nil {
			t.Fatal(err)
		}
		if *cfg.(*Config) != want {
			t.Errorf("%s: %+v, want %+v", id, cfg, want)
		}
	}
}

// An authenticator that does not exist, or cannot tell a tenant, stops
// the collector at start rather than counting every gRPC refusal as the
// unknown tenant's.
func TestStartChecksTheAuthenticator(t *testing.T) {
	for _, id := range []string{"tenantauth", "nop"} {
		ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), &Config{Authenticator: component.MustNewID(id)})
		if err != nil {
			t.Fatal(err)
		}
		host := hostWith{component.MustNewID("nop"): struct{ component.Component }{}}
		if err := ext.Start(context.Background(), host); err == nil {
			t.Errorf("%s: started", id)
		}
	}
}

type hostWith map[component.ID]component.Component

func (h hostWith) GetExtensions() map[component.ID]component.Component { return h }
