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
}

// Token is one accepted bearer token and the tenant it belongs to.
type Token struct {
	Tenant string `mapstructure:"tenant"`
	// SHA256 is the hex SHA-256 of the token.
	SHA256 string `mapstructure:"sha256"`
}

// Validate checks the inline tokens; the file is checked at start.
func (c *Config) Validate() error {
	if len(c.Tokens) == 0 && c.TokensFile == "" {
		return errors.New("set tokens and/or tokens_file: an authenticator without tokens refuses everyone")
	}
	_, err := newTable(c.Tokens)
	return err
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
