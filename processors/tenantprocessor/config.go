package tenantprocessor

import (
	"errors"
	"fmt"

	"github.com/docketlabs/docket/internal/conventions"
)

// What to do with a resource whose sender wrote a tenant other than the one
// it authenticated as.
const (
	// MismatchRefuse refuses the whole request (nothing of it is stored).
	MismatchRefuse = "refuse"
	// MismatchFlag stores it under the authenticated tenant and marks the
	// resource with the claimed one.
	MismatchFlag = "flag"
)

// Config says where a sender's tenant comes from.
type Config struct {
	// AuthAttribute is the client.Info.Auth attribute, set by the receiver's
	// authenticator, that names the sender's identity.
	AuthAttribute string `mapstructure:"auth_attribute"`
	// Identities maps identity values to tenants. Empty: the identity is
	// the tenant. Set: an identity not listed is refused.
	Identities map[string]string `mapstructure:"identities"`
	// OnMismatch is refuse or flag.
	OnMismatch string `mapstructure:"on_mismatch"`
	// TrustSenderAttribute takes the tenant from the sender's resource
	// attribute when the request carries no identity. Only for a loopback
	// receiver (docket dev): anyone who can send chooses the tenant.
	TrustSenderAttribute bool `mapstructure:"trust_sender_attribute"`
	// DefaultTenant is the tenant of unidentified resources that name none
	// (with trust_sender_attribute).
	DefaultTenant string `mapstructure:"default_tenant"`
}

// Validate checks the config.
func (c *Config) Validate() error {
	if c.AuthAttribute == "" {
		return errors.New("auth_attribute must not be empty")
	}
	if c.OnMismatch != MismatchRefuse && c.OnMismatch != MismatchFlag {
		return fmt.Errorf("on_mismatch: %q is neither %s nor %s", c.OnMismatch, MismatchRefuse, MismatchFlag)
	}
	if !conventions.ValidTenant(c.DefaultTenant) {
		return fmt.Errorf("default_tenant: must be 1 to %d bytes of UTF-8 without control characters", conventions.MaxTenantLen)
	}
	for id, tenant := range c.Identities {
		if !conventions.ValidTenant(tenant) {
			return fmt.Errorf("identities[%q]: tenant must be 1 to %d bytes of UTF-8 without control characters", id, conventions.MaxTenantLen)
		}
	}
	return nil
}
