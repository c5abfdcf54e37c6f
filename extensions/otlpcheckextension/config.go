package otlpcheckextension

import "go.opentelemetry.io/collector/component"

// Config of the otlpcheck extension. What it answers is fixed by the OTLP
// specification; the one setting says whose refusals it counts.
type Config struct {
	// Authenticator names the receiver's authenticator (tenantauth), to
	// count a malformed OTLP/gRPC request under its sender's tenant: gRPC
	// decodes the body before it authenticates, so the tenant is not known
	// otherwise. OTLP/HTTP authenticates first and needs no setting.
	// Without it such gRPC requests count under the unknown tenant.
	Authenticator component.ID `mapstructure:"authenticator"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (*Config) Validate() error { return nil }
