package lifecycleextension

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/ledger/lifecycle"
)

// Config of the lifecycle extension.
type Config struct {
	// Storage is the ID of the ledgerstorage extension whose ledger the
	// lifecycle runs on.
	Storage component.ID `mapstructure:"storage"`
	// ContentStore is the ID of the contentstore extension whose objects
	// expire and are deleted.
	ContentStore component.ID `mapstructure:"content_store"`
	// Retention is the policy expiry applies.
	Retention lifecycle.Policy `mapstructure:"retention"`
	// Interval is how often a cycle runs: unfinished deletion jobs, then
	// expiry (applying holds first), then the orphan scan.
	Interval time.Duration `mapstructure:"interval"`
	// Lease elects the one replica that runs the cycles.
	Lease LeaseConfig `mapstructure:"lease"`
}

// LeaseConfig is the lease in the ledger that replicas sharing it compete
// for (ledger/lease).
type LeaseConfig struct {
	// TTL is how long the lease lasts without renewal: after the holder
	// dies, another replica takes over within TTL plus RenewInterval.
	TTL time.Duration `mapstructure:"ttl"`
	// RenewInterval is how often the holder renews (and the others try to
	// take the lease).
	RenewInterval time.Duration `mapstructure:"renew_interval"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	if err := c.Retention.Validate(); err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	if c.Interval <= 0 {
		return errors.New("interval must be positive")
	}
	if c.Lease.TTL < 100*time.Millisecond {
		return errors.New("lease.ttl must be at least 100ms")
	}
	// Two renewals per TTL: one late or failed renewal does not lose the
	// lease.
	if c.Lease.RenewInterval <= 0 || c.Lease.RenewInterval > c.Lease.TTL/2 {
		return errors.New("lease.renew_interval must be positive and at most half of lease.ttl")
	}
	return nil
}
