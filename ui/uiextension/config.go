package uiextension

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/ui/auth"
)

// Config of the evidence UI extension.
type Config struct {
	// Endpoint is the listen address. A non-loopback address needs TLS,
	// or the proxy auth mode behind a TLS-terminating proxy.
	Endpoint string    `mapstructure:"endpoint"`
	TLS      TLSConfig `mapstructure:"tls"`
	// Auth is sign-in and sessions.
	Auth auth.Config `mapstructure:"auth"`
	// Storage is the ID of the ledgerstorage extension the UI reads
	// (`storage: ledgerstorage`). An engine configured here instead
	// (embedded / clickhouse) is deprecated.
	Storage storageconfig.Use `mapstructure:"storage"`
	// ContentStore is the ID of the contentstore extension that content
	// is revealed from; empty disables reveal, holds and deletions.
	ContentStore *component.ID `mapstructure:"content_store"`
	// Lifecycle is the ID of the lifecycle extension whose state the admin
	// page shows and whose policy holds and deletions apply. Unset: holds
	// and deletions started here apply Retention, and no lifecycle state
	// is shown.
	Lifecycle *component.ID `mapstructure:"lifecycle"`
	// Retention is the policy shown on the evidence page and applied by
	// deletions started from the UI, when no Lifecycle is named.
	Retention lifecycle.Policy `mapstructure:"retention"`
	// LifecycleInterval is refused when set: the lifecycle runs in the
	// lifecycle extension now (its interval).
	LifecycleInterval time.Duration `mapstructure:"lifecycle_interval"`
	// ExportDirectory holds audit bundles made from the UI for a day.
	ExportDirectory string `mapstructure:"export_directory"`
	// MaxConnections caps the UI's open connections, so that clients that
	// hold connections cannot take the file descriptors OTLP ingest in
	// the same process needs. Further clients wait to be accepted.
	MaxConnections int `mapstructure:"max_connections"`
	// Replay lets auditors start distribution replays from a complaint
	// page. Provider endpoints and keys come from the environment, as for
	// `docket replay` (OPENAI_BASE_URL, OPENAI_API_KEY, ANTHROPIC_*).
	Replay ReplayConfig `mapstructure:"replay"`
}

// ReplayConfig bounds the replays started from the UI.
type ReplayConfig struct {
	// Enabled offers replay on complaint pages. Replays are paid calls.
	Enabled bool `mapstructure:"enabled"`
	// MaxN is the most replays of one call (default 50).
	MaxN int `mapstructure:"max_n"`
	// MaxCostUSD is the highest budget of one run, in USD (default "1.00").
	MaxCostUSD string `mapstructure:"max_cost_usd"`
	// Timeout ends a run that takes longer (default 10m).
	Timeout time.Duration `mapstructure:"timeout"`
	// MaxRunning bounds the runs in flight (default 4).
	MaxRunning int `mapstructure:"max_running"`
	// OpenAIAPI is openai.chat_completions (default) or openai.responses.
	OpenAIAPI string `mapstructure:"openai_api"`
	// SampledTokens asks Chat Completions for the sampled tokens
	// (logprobs); divergence in tokens is then counted in them.
	SampledTokens bool `mapstructure:"sampled_tokens"`
}

// TLSConfig serves HTTPS.
type TLSConfig struct {
	CertFile string `mapstructure:"cert_file"`
	KeyFile  string `mapstructure:"key_file"`
}

// Validate checks the configuration.
func (c *Config) Validate() error {
	if c.Endpoint == "" {
		return errors.New("endpoint must not be empty")
	}
	if (c.TLS.CertFile == "") != (c.TLS.KeyFile == "") {
		return errors.New("tls: set both cert_file and key_file, or neither")
	}
	if err := c.Auth.Validate(); err != nil {
		return fmt.Errorf("auth: %w", err)
	}
	if err := c.Retention.Validate(); err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	if c.LifecycleInterval != 0 {
		// Refused, not ignored: a config that asked for retention must not
		// silently stop expiring data.
		return errors.New("lifecycle_interval: the lifecycle no longer runs in docketui; add the lifecycle extension (its interval) and name it here (lifecycle: <id>)")
	}
	if c.MaxConnections < 1 {
		return errors.New("max_connections must be at least 1")
	}
	if c.ExportDirectory == "" {
		return errors.New("export_directory must not be empty")
	}
	if c.Replay.MaxN < 0 || c.Replay.Timeout < 0 || c.Replay.MaxRunning < 0 {
		return errors.New("replay: max_n, timeout and max_running must not be negative")
	}
	if c.Replay.MaxN > replay.MaxN {
		return fmt.Errorf("replay: max_n must be at most %d", replay.MaxN)
	}
	if c.Replay.MaxCostUSD != "" {
		if _, err := replay.ParseUSD(c.Replay.MaxCostUSD); err != nil {
			return fmt.Errorf("replay: max_cost_usd: %w", err)
		}
	}
	return c.Storage.Validate()
}
