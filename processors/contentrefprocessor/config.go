package contentrefprocessor

import (
	"errors"
	"fmt"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
)

// Config of the contentref processor. The empty config is valid: content of
// every tenant and service is captured into the contentstore extension,
// which must be configured (the processor does not start without it).
type Config struct {
	// Store names the contentstore extension to write to. Unset: the
	// extension "contentstore".
	Store *component.ID `mapstructure:"store"`
	// DefaultTenant is the tenant of resources that name none. The tenant
	// attribute is the contract's (conventions.TenantAttribute), as for the
	// ledger exporter: references and ledger rows agree on the tenant.
	DefaultTenant string `mapstructure:"default_tenant"`
	// Capture is whether content is stored when no rule matches. Content
	// that is not captured is dropped from the telemetry all the same.
	Capture bool `mapstructure:"capture"`
	// CaptureRules override Capture per tenant and/or service; the first
	// matching rule wins.
	CaptureRules []CaptureRule `mapstructure:"capture_rules"`
	// WriteConcurrency is how many store batches (group commits) of one
	// request are written at once, and how many items are measured at once.
	WriteConcurrency int `mapstructure:"write_concurrency"`
	// MaxInflightBytes bounds the content held in memory by writes in
	// progress (a single larger item still proceeds, alone).
	MaxInflightBytes int64 `mapstructure:"max_inflight_bytes"`
	// MetadataKeys are attributes kept on GenAI telemetry beyond the
	// contract's metadata; every other attribute that is not a content key
	// is unknown. A content key stays content even if listed.
	MetadataKeys []string `mapstructure:"metadata_keys"`
	// MetadataRules add metadata keys for the resources they match (every
	// matching rule adds its keys).
	MetadataRules []MetadataRule `mapstructure:"metadata_rules"`
	// UnknownKeys says what becomes of unknown attributes: store (moved to
	// the content store as one item, referenced) or drop (removed).
	UnknownKeys string `mapstructure:"unknown_keys"`
	// UnknownKeysScope is the telemetry unknown attributes are looked for
	// on: genai (spans, events and log records of GenAI instrumentation)
	// or all (every span, event and log record).
	UnknownKeysScope string `mapstructure:"unknown_keys_scope"`
}

// What becomes of unknown attributes of GenAI telemetry.
const (
	UnknownStore = "store"
	UnknownDrop  = "drop"

	ScopeGenAI = "genai"
	ScopeAll   = "all"
)

// familyNone labels the unknown attributes of telemetry that belongs to no
// GenAI instrumentation (unknown_keys_scope: all).
const familyNone = "none"

// CaptureRule decides capture for the resources it matches. An empty
// tenant or service matches any.
type CaptureRule struct {
	Tenant  string `mapstructure:"tenant"`
	Service string `mapstructure:"service"`
	Capture *bool  `mapstructure:"capture"`
}

// MetadataRule adds metadata keys for a tenant and/or service. An empty
// tenant or service matches any.
type MetadataRule struct {
	Tenant  string   `mapstructure:"tenant"`
	Service string   `mapstructure:"service"`
	Keys    []string `mapstructure:"keys"`
}

var _ component.Config = (*Config)(nil)

// Validate checks the configuration.
func (c *Config) Validate() error {
	if err := contentstore.ValidateTenant(c.DefaultTenant); err != nil {
		return fmt.Errorf("default_tenant: %w", err)
	}
	if c.WriteConcurrency < 1 || c.WriteConcurrency > 256 {
		return errors.New("write_concurrency must be between 1 and 256")
	}
	if c.MaxInflightBytes < 1<<20 {
		return errors.New("max_inflight_bytes must be at least 1 MiB")
	}
	if c.UnknownKeys != UnknownStore && c.UnknownKeys != UnknownDrop {
		return fmt.Errorf("unknown_keys must be %q or %q, not %q", UnknownStore, UnknownDrop, c.UnknownKeys)
	}
	if c.UnknownKeysScope != ScopeGenAI && c.UnknownKeysScope != ScopeAll {
		return fmt.Errorf("unknown_keys_scope must be %q or %q, not %q", ScopeGenAI, ScopeAll, c.UnknownKeysScope)
	}
	if err := validateMetadataKeys("metadata_keys", c.MetadataKeys); err != nil {
		return err
	}
	for i, r := range c.MetadataRules {
		if r.Tenant == "" && r.Service == "" {
			return fmt.Errorf("metadata_rules[%d]: set tenant and/or service (for everything, use metadata_keys)", i)
		}
		if err := validateMetadataKeys(fmt.Sprintf("metadata_rules[%d].keys", i), r.Keys); err != nil {
			return err
		}
	}
	for i, r := range c.CaptureRules {
		if r.Tenant == "" && r.Service == "" {
			return fmt.Errorf("capture_rules[%d]: set tenant and/or service (for everything, set capture)", i)
		}
		if r.Capture == nil {
			return fmt.Errorf("capture_rules[%d]: capture (true or false) is required", i)
		}
	}
	return nil
}

func validateMetadataKeys(field string, keys []string) error {
	for i, k := range keys {
		if conventions.IsContent(k) {
			return fmt.Errorf("%s[%d]: %q is a content key and stays content", field, i, k)
		}
	}
	return nil
}

// metadataKeys are the configured metadata keys of a tenant's service.
func (c *Config) metadataKeys(tenant, service string) map[string]bool {
	var m map[string]bool
	add := func(keys []string) {
		for _, k := range keys {
			if m == nil {
				m = map[string]bool{}
			}
			m[k] = true
		}
	}
	add(c.MetadataKeys)
	for _, r := range c.MetadataRules {
		if (r.Tenant == "" || r.Tenant == tenant) && (r.Service == "" || r.Service == service) {
			add(r.Keys)
		}
	}
	return m
}

// denies reports whether unknown attributes are looked for on telemetry
// of family (genAI: it belongs to GenAI instrumentation), and under which
// family they are counted.
func (c *Config) denies(family string, genAI bool) (string, bool) {
	switch {
	case genAI:
		return family, true
	case c.UnknownKeysScope == ScopeAll:
		return familyNone, true
	}
	return "", false
}

// captures reports whether content of a tenant's service is captured.
func (c *Config) captures(tenant, service string) bool {
	for _, r := range c.CaptureRules {
		if (r.Tenant == "" || r.Tenant == tenant) && (r.Service == "" || r.Service == service) {
			return *r.Capture
		}
	}
	return c.Capture
}
