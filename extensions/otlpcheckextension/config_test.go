package otlpcheckextension

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensiontest"

	"github.com/docketlabs/docket/extensions/otlpcheckextension/internal/metadata"
	"github.com/docketlabs/docket/internal/configtest"
	"github.com/docketlabs/docket/internal/hosttest"
)

func TestConfig(t *testing.T) {
	configtest.Check(t, NewFactory(), "", &Config{MaxRequestBodySize: 20 << 20}, "")
	configtest.Check(t, NewFactory(), "authenticated", &Config{Authenticator: component.MustNewID("tenantauth"), MaxRequestBodySize: 1 << 20}, "")
	configtest.Check(t, NewFactory(), "unbounded", nil, "max_request_body_size must be positive")
}

// An authenticator that does not exist, or cannot tell a tenant, stops
// the collector at start rather than counting every gRPC refusal as the
// unknown tenant's.
func TestStartChecksTheAuthenticator(t *testing.T) {
	for _, id := range []string{"tenantauth", "nop"} {
		ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), &Config{Authenticator: component.MustNewID(id), MaxRequestBodySize: 1})
		if err != nil {
			t.Fatal(err)
		}
		host := hosttest.Extensions{component.MustNewID("nop"): struct{ component.Component }{}}
		if err := ext.Start(context.Background(), host); err == nil {
			t.Errorf("%s: started", id)
		}
	}
}
