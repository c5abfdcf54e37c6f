package ledgerstorageextension

import (
	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/ledger/storageconfig"
)

// Config of the ledgerstorage extension: one engine. The empty config is
// valid: the embedded engine under ./data/ledger.
type Config struct {
	storageconfig.Config `mapstructure:",squash"`
}

var _ component.Config = (*Config)(nil)

// Validate checks that at most one engine is chosen and it is complete.
func (c *Config) Validate() error { return c.Config.Validate() }
