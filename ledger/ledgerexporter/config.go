package ledgerexporter

import (
	"errors"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/config/configretry"
	"go.opentelemetry.io/collector/exporter/exporterhelper"

	"github.com/docketlabs/docket/ledger/storageconfig"
)

// Config of the ledger exporter. The empty config is valid: embedded engine
// under ./data/ledger, tenant "default".
type Config struct {
	TimeoutConfig exporterhelper.TimeoutConfig                             `mapstructure:",squash"`
	QueueConfig   configoptional.Optional[exporterhelper.QueueBatchConfig] `mapstructure:"sending_queue"`
	RetryConfig   configretry.BackOffConfig                                `mapstructure:"retry_on_failure"`

	// Storage is the ID of the ledgerstorage extension the rows go to
	// (`storage: ledgerstorage`). An engine configured here instead
	// (embedded / clickhouse) is deprecated.
	Storage storageconfig.Use `mapstructure:"storage"`
	// DefaultTenant is the tenant of resources that name none. The tenant
	// attribute is the contract's (conventions.TenantAttribute), the one the
	// tenant processor stamps: it is not configurable, so no component can
	// read the tenant from an attribute a sender controls.
	DefaultTenant string `mapstructure:"default_tenant"`
	// PriceTable is an optional price file replacing the shipped table.
	PriceTable string `mapstructure:"price_table"`
	// Backpressure is how calls the queue cannot take are answered.
	Backpressure BackpressureConfig `mapstructure:"backpressure"`
	// Validation is the window around receipt in which span timestamps are
	// believed.
	Validation ValidationConfig `mapstructure:"validation"`
	// RequestSpans bounds the linking of server, producer and consumer
	// spans to the LLM calls of their trace (linker.go).
	RequestSpans RequestSpansConfig `mapstructure:"request_spans"`
}

// ValidationConfig: a timestamp more than MaxClockSkew after receipt or
// MaxAge before it is not stored as reported but flagged in the row's
// attribute_issues.
type ValidationConfig struct {
	MaxClockSkew time.Duration `mapstructure:"max_clock_skew"`
	MaxAge       time.Duration `mapstructure:"max_age"`
}

// BackpressureConfig: a full queue, or a queue whose disk is full, refuses
// new calls at once with a retryable status and this delay.
type BackpressureConfig struct {
	// RetryAfter is the delay senders are told to wait (HTTP Retry-After,
	// gRPC RetryInfo), in whole seconds.
	RetryAfter time.Duration `mapstructure:"retry_after"`
	// DiskReserveMiB is space held in the persistent queue's storage for
	// the queue's own bookkeeping; when items no longer fit, the reserve
	// takes the last ones in and new calls are refused.
	DiskReserveMiB int `mapstructure:"disk_reserve_mib"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.DefaultTenant == "" {
		return errors.New("default_tenant must not be empty")
	}
	if c.RetryConfig.Enabled && c.RetryConfig.MaxElapsedTime != 0 {
		// A bounded retry drops rows when storage is down longer than the
		// bound; the ledger keeps every call, so retries must not give up.
		return errors.New("retry_on_failure.max_elapsed_time must be 0 (retry until stored): the ledger never drops a call")
	}
	if c.QueueConfig.HasValue() && c.QueueConfig.Get().BlockOnOverflow {
		// Blocking holds the sender until its own timeout, with no
		// Retry-After to back off by.
		return errors.New("sending_queue.block_on_overflow must be false: a full queue answers at once with 429/RESOURCE_EXHAUSTED and a retry delay")
	}
	if c.Backpressure.RetryAfter < time.Second || c.Backpressure.RetryAfter%time.Second != 0 {
		return errors.New("backpressure.retry_after must be whole seconds, at least 1s (Retry-After counts seconds)")
	}
	if c.Backpressure.DiskReserveMiB < 1 {
		return errors.New("backpressure.disk_reserve_mib must be at least 1")
	}
	if c.Validation.MaxClockSkew <= 0 || c.Validation.MaxAge <= 0 {
		return errors.New("validation.max_clock_skew and validation.max_age must be positive: a timestamp is believed only within a window of receipt")
	}
	if c.RequestSpans.Window <= 0 || c.RequestSpans.MaxTraces < 1 || c.RequestSpans.MaxPendingSpans < 1 {
		return errors.New("request_spans.window must be positive, max_traces and max_pending_spans at least 1")
	}
	if !c.RetryConfig.Enabled {
		return errors.New("retry_on_failure must stay enabled: the ledger never drops a call")
	}
	return c.Storage.Validate()
}
