package otlpcheckextension

import (
	"testing"

	"go.opentelemetry.io/collector/confmap"

	"github.com/docketlabs/docket/internal/configtest"
)

func TestConfig(t *testing.T) {
	cfg := configtest.Load(t, "otlpcheck", NewFactory().CreateDefaultConfig(), nil)
	if err := confmap.Validate(cfg); err != nil {
		t.Fatal(err)
	}
}
