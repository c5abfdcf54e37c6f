package tenantauthextension

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/docketlabs/docket/internal/conventions"
)

// Config maps bearer tokens to tenants. Tokens are stored as their SHA-256,
// never in clear: they are long random secrets, so a plain hash is enough
// and a leaked config does not let anyone send.
type Config struct {
	// Tokens lists tokens inline (values may come from the environment:
	// ${env:VAR}).
	Tokens []Token `mapstructure:"tokens"`
	// TokensFile names a file of more tokens, one "TENANT SHA256HEX" per
	// line; blank lines and lines starting with '#' are skipped. It is read
	// at start.
	TokensFile string `mapstructure:"tokens_file"`
	// Certificates maps verified client certificates to tenants, for
	// senders that come without a token. The receiver verifies them (tls:
	// client_ca_file); on OTLP/HTTP this extension must also be listed
	// under the receiver's middlewares, which see the certificate.
	Certificates []Certificate `mapstructure:"certificates"`
}

// Certificate is one client certificate name and the tenant it belongs
// to, or, with Relay, the name of a relay.
type Certificate struct {
	Tenant string `mapstructure:"tenant"`
	// Name is matched exactly against the certificate's DNS, URI and email
	// subject alternative names and its subject common name.
	Name string `mapstructure:"name"`
	// Relay makes the certificate a relay's (a Docket agent in front of
	// this gateway) instead of a tenant's: the relay authenticated its own
	// senders and stamped each resource's tenant, which the tenant
	// processor then takes. A relay is no tenant: it has no Tenant, and
	// its requests carry no tenant of their own.
	Relay bool `mapstructure:"relay"`
}

// Token is one accepted bearer token and the tenant it belongs to.
type Token struct {
	Tenant string `mapstructure:"tenant"`
	// SHA256 is the hex SHA-256 of the token.
	SHA256 string `mapstructure:"sha256"`
}

// Validate checks the inline tokens; the file is checked at start.
func (c *Config) Validate() error {
	if len(c.Tokens) == 0 && c.TokensFile == "" && len(c.Certificates) == 0 {
		return errors.New("set tokens, tokens_file and/or certificates: an authenticator without them refuses everyone")
	}
	if _, err := newTable(c.Tokens); err != nil {
		return err
	}
	_, err := newCertTable(c.Certificates)
	return err
}

// identity is whom a credential names: a tenant, or a relay.
type identity struct {
	tenant string
	relay  string // the relay's certificate name
}

func (id identity) String() string {
	if id.relay != "" {
		return fmt.Sprintf("relay %q", id.relay)
	}
	return fmt.Sprintf("tenant %q", id.tenant)
}

// newCertTable checks the certificate names; one name may name only one
// identity, and a certificate is either a tenant's or a relay's.
func newCertTable(certs []Certificate) (map[string]identity, error) {
	out := make(map[string]identity, len(certs))
	for i, c := range certs {
		if c.Name == "" {
			return nil, fmt.Errorf("certificates[%d]: name must not be empty", i)
		}
		id := identity{tenant: c.Tenant}
		switch {
		case c.Relay && c.Tenant != "":
			return nil, fmt.Errorf("certificates[%d] (%q): a relay is no tenant: set tenant or relay, not both", i, c.Name)
		case c.Relay:
			id = identity{relay: c.Name}
		case !conventions.ValidTenant(c.Tenant):
			return nil, fmt.Errorf("certificates[%d]: tenant must be 1 to %d bytes of UTF-8 without control characters", i, conventions.MaxTenantLen)
		}
		if prev, dup := out[c.Name]; dup && prev != id {
			return nil, fmt.Errorf("certificates[%d]: name %q is listed for %s and %s", i, c.Name, prev, id)
		}
		out[c.Name] = id
	}
	return out, nil
}

// entry is a parsed token.
type entry struct {
	tenant string
	hash   []byte
}

// newTable checks and parses tokens; one hash may name only one tenant.
func newTable(tokens []Token) ([]entry, error) {
	seen := map[string]string{}
	out := make([]entry, 0, len(tokens))
	for i, t := range tokens {
		if !conventions.ValidTenant(t.Tenant) {
			return nil, fmt.Errorf("tokens[%d]: tenant must be 1 to %d bytes of UTF-8 without control characters", i, conventions.MaxTenantLen)
		}
		h, err := hex.DecodeString(t.SHA256)
		if err != nil || len(h) != 32 {
			return nil, fmt.Errorf("tokens[%d] (tenant %q): sha256 must be 64 hex digits", i, t.Tenant)
		}
		if prev, dup := seen[string(h)]; dup && prev != t.Tenant {
			return nil, fmt.Errorf("tokens[%d]: the same token is listed for tenants %q and %q", i, prev, t.Tenant)
		}
		seen[string(h)] = t.Tenant
		out = append(out, entry{tenant: t.Tenant, hash: h})
	}
	return out, nil
}
