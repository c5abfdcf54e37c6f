package contentstoreextension

import (
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/contentstore"
)

// Config of the contentstore extension: the store's backend, secret and
// limits. The empty config is valid: a directory store under
// ./data/content with a secret generated in ./data/content.secret, 16 MiB per
// object and 4 GiB in total.
type Config struct {
	contentstore.Config `mapstructure:",squash"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	if err := c.Config.Validate(); err != nil {
		return fmt.Errorf("contentstore: %w", err)
	}
	return nil
}
