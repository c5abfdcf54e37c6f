package otlpcheckextension

import "go.opentelemetry.io/collector/component"

// Config of the otlpcheck extension. It has no settings: what it answers
// is fixed by the OTLP specification.
type Config struct{}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (*Config) Validate() error { return nil }
