package otlpcheckextension

import (
	"errors"

	"go.opentelemetry.io/collector/component"
)

// defaultMaxRequestBodySize is confighttp's default, the OTLP receiver's.
const defaultMaxRequestBodySize = 20 << 20

// Config of the otlpcheck extension. What it answers is fixed by the OTLP
// specification; the settings say whose refusals it counts and how large
// a body it decompresses.
type Config struct {
	// Authenticator names the receiver's authenticator (tenantauth), to
	// count a malformed OTLP/gRPC request under its sender's tenant: gRPC
	// decodes the body before it authenticates, so the tenant is not known
	// otherwise. OTLP/HTTP authenticates first and needs no setting.
	// Without it such gRPC requests count under the unknown tenant.
	Authenticator component.ID `mapstructure:"authenticator"`
	// MaxRequestBodySize bounds an OTLP/HTTP body once decompressed, when
	// the receiver leaves decompression to this middleware
	// (compression_algorithms: []): set it as the receiver's
	// max_request_body_size, which then bounds the compressed body only.
	MaxRequestBodySize int64 `mapstructure:"max_request_body_size"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.MaxRequestBodySize <= 0 {
		return errors.New("max_request_body_size must be positive")
	}
	return nil
}
