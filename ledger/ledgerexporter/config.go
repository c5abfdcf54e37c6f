package ledgerexporter

import (
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/docketlabs/docket/ledger/backend"
)

// Config of the ledger exporter. The empty config is valid: embedded engine
// under ./data/ledger, tenant "default".
type Config struct {
	TimeoutConfig exporterhelper.TimeoutConfig                             `mapstructure:",squash"`
	QueueConfig   configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig   configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`

	// Storage selects the ClickHouse engine.
	Storage backend.Config `mapstructure:"storage"`
	// TenantAttribute is the resource attribute that names the tenant.
	TenantAttribute string `mapstructure:"tenant_attribute"`
	// DefaultTenant is the tenant of resources without that attribute.
	DefaultTenant string `mapstructure:"default_tenant"`
	// PriceTable is an optional price file replacing the shipped table.
	PriceTable string `mapstructure:"price_table"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.TenantAttribute == "" {
		return errors.New("tenant_attribute must not be empty")
	}
	if c.DefaultTenant == "" {
		return errors.New("default_tenant must not be empty")
	}
	if c.RetryConfig.Enabled && c.RetryConfig.MaxElapsedTime != 0 {
		// A bounded retry drops rows when storage is down longer than the
		// bound; the ledger keeps every call, so retries must not give up.
		return errors.New("retry_on_failure.max_elapsed_time must be 0 (retry until stored): the ledger never drops a call")
	}
	if !c.RetryConfig.Enabled {
		return errors.New("retry_on_failure must stay enabled: the ledger never drops a call")
	}
	return c.Storage.Validate()
}
