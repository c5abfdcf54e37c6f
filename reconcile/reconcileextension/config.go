package reconcileextension

import (
	"errors"
	"fmt"
	"time"

	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/reconcile"
)

// Config of the reconcile extension.
type Config struct {
	// Storage is the ID of the ledgerstorage extension holding the ledger
	// (`storage: ledgerstorage`), the one the ledger exporter writes. An
	// engine configured here instead (embedded / clickhouse) is deprecated.
	Storage storageconfig.Use `mapstructure:"storage"`
	// Interval is how often the reports are pulled and the ledger
	// reconciled; the first run is at start.
	Interval time.Duration `mapstructure:"interval"`
	// LookbackDays is how many days before today each run pulls again
	// (providers revise recent days) and reconciles.
	LookbackDays int `mapstructure:"lookback_days"`
	// TolerancePercent is the drift accepted as agreement (default 0.5).
	TolerancePercent float64 `mapstructure:"tolerance_percent"`
	// Providers are pulled with their admin keys; none means the reports
	// come from `docket usage import` and runs only reconcile.
	Providers []ProviderConfig `mapstructure:"providers"`
	// Keys maps, per provider, service names to the API key ID they use,
	// to reconcile per key (reconcile.Options.Keys).
	Keys map[string]map[string]string `mapstructure:"keys"`
}

// ProviderConfig is one provider's usage API.
type ProviderConfig struct {
	Provider string `mapstructure:"provider"`
	// BaseURL is the API base; empty is the provider's public API.
	BaseURL string `mapstructure:"base_url"`
	// AdminKeyFile holds the organization admin key; empty reads it from
	// OPENAI_ADMIN_KEY or ANTHROPIC_ADMIN_KEY.
	AdminKeyFile string `mapstructure:"admin_key_file"`
}

// Validate checks the configuration; the admin keys are read at start.
func (c *Config) Validate() error {
	if err := c.Storage.Validate(); err != nil {
		return err
	}
	if c.Interval < time.Minute {
		return errors.New("interval must be at least 1m: the providers' reports change slowly and rate-limit their admin APIs")
	}
	if c.LookbackDays < 1 || c.LookbackDays > reconcile.MaxDays-1 {
		return fmt.Errorf("lookback_days must be between 1 and %d", reconcile.MaxDays-1)
	}
	if c.TolerancePercent <= 0 || c.TolerancePercent > 100 {
		return errors.New("tolerance_percent must be above 0 and at most 100")
	}
	seen := map[string]bool{}
	for i, p := range c.Providers {
		if err := usage.CheckProvider(p.Provider); err != nil {
			return fmt.Errorf("providers[%d]: %w", i, err)
		}
		if seen[p.Provider] {
			return fmt.Errorf("providers[%d]: %s is listed twice", i, p.Provider)
		}
		seen[p.Provider] = true
	}
	for p := range c.Keys {
		if err := usage.CheckProvider(p); err != nil {
			return fmt.Errorf("keys: %w", err)
		}
	}
	return nil
}
