package uiextension

import (
	"errors"

	"github.com/docketlabs/docket/ledger/backend"
)

// Config of the evidence UI extension.
type Config struct {
	// Endpoint is the listen address (loopback only for now).
	Endpoint string `mapstructure:"endpoint"`
	// Storage is the ledger engine; in embedded mode it must be the same
	// directory as the ledger exporter's, which shares the engine.
	Storage backend.Config `mapstructure:"storage"`
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Endpoint == "" {
		return errors.New("endpoint must not be empty")
	}
	return c.Storage.Validate()
}
