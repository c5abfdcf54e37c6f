package conventions

import (
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The tenant contract. The tenant processor stamps TenantAttribute on every
// resource from the sender's authenticated identity; everything after it
// (content references, ledger rows) reads the tenant through Tenant.
const (
	// TenantAttribute is the resource attribute naming a resource's tenant.
	TenantAttribute = "tenant.id"
	// TenantClaimedAttribute marks a resource whose sender wrote another
	// tenant than its authenticated one; it holds the claimed value.
	TenantClaimedAttribute = "docket.tenant.claimed"
	// AuthTenantAttribute is the client.Info.Auth attribute through which
	// Docket's ingest authenticator tells which tenant a sender belongs to.
	AuthTenantAttribute = "tenant"
	// AuthRelayAttribute is the client.Info.Auth attribute through which
	// Docket's ingest authenticator tells that a sender is a relay (an
	// agent proven by its client certificate) instead of a tenant: it holds
	// the relay's certificate name. A relay authenticated its own senders
	// and stamped TenantAttribute on every resource; that stamp is then the
	// tenant. Namespaced so that no other authenticator's attribute is
	// taken for it.
	AuthRelayAttribute = "docket.relay"
	// DefaultTenant is the tenant of resources that name none.
	DefaultTenant = "default"
	// MaxTenantLen bounds a tenant name in bytes.
	MaxTenantLen = 512
	// UnknownTenant labels counts of requests whose tenant nobody knows
	// (credentials that name none, a body that could not be read on a
	// receiver without authentication). Reserved: no tenant has this name.
	UnknownTenant = "_unknown"
)

// ValidTenant reports whether s can name a tenant: 1 to MaxTenantLen bytes
// of valid UTF-8 without control characters, other than UnknownTenant. It
// is the one rule every component applies, so a resource never has two tenants.
func ValidTenant(s string) bool {
	return s != "" && s != UnknownTenant && len(s) <= MaxTenantLen && utf8.ValidString(s) &&
		!strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f })
}

// Tenant returns the tenant a resource names under TenantAttribute, or def
// when it names none or an invalid one.
func Tenant(attrs pcommon.Map, def string) string {
	if v, ok := attrs.Get(TenantAttribute); ok {
		if s := v.AsString(); ValidTenant(s) {
			return s
		}
	}
	return def
}
