package tenantauthextension

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensionauth"

	"github.com/docketlabs/docket/internal/conventions"
)

// maxTokenLen bounds what is hashed; real tokens are far shorter.
const maxTokenLen = 4096

var (
	errNoToken  = errors.New("tenantauth: missing bearer token")
	errBadToken = errors.New("tenantauth: invalid bearer token")
)

type authenticator struct {
	cfg    *Config
	tokens []entry
}

var _ extensionauth.Server = (*authenticator)(nil)

func (a *authenticator) Start(context.Context, component.Host) error {
	tokens := a.cfg.Tokens
	if a.cfg.TokensFile != "" {
		more, err := readTokensFile(a.cfg.TokensFile)
		if err != nil {
			return err
		}
		tokens = append(append([]Token{}, tokens...), more...)
	}
	table, err := newTable(tokens)
	if err != nil {
		return fmt.Errorf("tenantauth: %w", err)
	}
	a.tokens = table
	return nil
}

func (a *authenticator) Shutdown(context.Context) error { return nil }

// Authenticate accepts a request carrying "Authorization: Bearer TOKEN" for
// a listed token and records the token's tenant in client.Info.Auth.
func (a *authenticator) Authenticate(ctx context.Context, sources map[string][]string) (context.Context, error) {
	token, ok := bearer(sources)
	if !ok {
		return ctx, errNoToken
	}
	sum := sha256.Sum256([]byte(token))
	// Compare with every entry, without stopping at a match, so the time
	// taken does not tell which or how many tokens exist.
	tenant := ""
	for _, e := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], e.hash) == 1 {
			tenant = e.tenant
		}
	}
	if tenant == "" {
		return ctx, errBadToken
	}
	cl := client.FromContext(ctx)
	cl.Auth = authData{tenant: tenant}
	return client.NewContext(ctx, cl), nil
}

// bearer returns the token of the Authorization header: HTTP gives it
// canonicalised, gRPC metadata in lower case.
func bearer(sources map[string][]string) (string, bool) {
	v := sources["Authorization"]
	if len(v) == 0 {
		v = sources["authorization"]
	}
	if len(v) != 1 {
		return "", false
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(v[0]), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" || len(token) > maxTokenLen {
		return "", false
	}
	return token, true
}

// authData is the identity of an authenticated sender.
type authData struct{ tenant string }

func (d authData) GetAttribute(name string) any {
	if name == conventions.AuthTenantAttribute {
		return d.tenant
	}
	return nil
}

func (authData) GetAttributeNames() []string { return []string{conventions.AuthTenantAttribute} }

// readTokensFile reads "TENANT SHA256HEX" lines. Errors name the line, not
// its content.
func readTokensFile(path string) ([]Token, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("tenantauth: read tokens_file: %w", err)
	}
	var out []Token
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("tenantauth: %s line %d: want \"TENANT SHA256HEX\"", path, n)
		}
		out = append(out, Token{Tenant: f[0], SHA256: f[1]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("tenantauth: read tokens_file: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("tenantauth: %s lists no token", path)
	}
	return out, nil
}
