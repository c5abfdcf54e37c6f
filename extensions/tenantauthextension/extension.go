package tenantauthextension

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
)

// maxTokenLen bounds what is hashed; real tokens are far shorter.
const maxTokenLen = 4096

var (
	errNoToken  = errors.New("tenantauth: missing bearer token")
	errBadToken = errors.New("tenantauth: invalid bearer token")
	errNoCert   = errors.New("tenantauth: missing bearer token or verified client certificate")
	errBadCert  = errors.New("tenantauth: the client certificate names no single tenant or relay")
)

type authenticator struct {
	cfg *Config
	// account counts refused requests.
	account *completeness.Account
	tokens  []entry
	certs   map[string]identity // certificate name → tenant or relay
}

var (
	_ extensionauth.Server           = (*authenticator)(nil)
	_ extensionmiddleware.HTTPServer = (*authenticator)(nil)
)

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
	if a.certs, err = newCertTable(a.cfg.Certificates); err != nil {
		return fmt.Errorf("tenantauth: %w", err)
	}
	return nil
}

func (a *authenticator) Shutdown(context.Context) error { return nil }

// Authenticate accepts a request carrying "Authorization: Bearer TOKEN" for
// a listed token, or, with certificates configured and no Authorization
// header, a verified client certificate of a listed name, and records the
// tenant, or the relay, in client.Info.Auth. A refused request is counted
// in the completeness account under the unknown tenant.
func (a *authenticator) Authenticate(ctx context.Context, sources map[string][]string) (context.Context, error) {
	id, err := a.identify(ctx, sources)
	if err != nil {
		a.account.Refuse(conventions.UnknownTenant, completeness.RequestAuth)
		return ctx, err
	}
	if id == (identity{}) {
		// OTLP/HTTP: the certificate is not visible here; the middleware
		// (GetHTTPHandler) decides, and without it the tenant processor
		// refuses a request that has no identity.
		return ctx, nil
	}
	return withIdentity(ctx, id), nil
}

// TenantOf returns the tenant of a request's credentials as Authenticate
// decides it, without counting a refusal; "" when they name no single
// tenant: a relay's request carries the tenants the relay stamped, and
// the certificate of an OTLP/HTTP request is left to the middleware.
func (a *authenticator) TenantOf(ctx context.Context, sources map[string][]string) (string, error) {
	id, err := a.identify(ctx, sources)
	return id.tenant, err
}

// identify returns whom a request's credentials name; the zero identity
// when the certificate of an OTLP/HTTP request is left to the middleware.
func (a *authenticator) identify(ctx context.Context, sources map[string][]string) (identity, error) {
	if _, sent := authorization(sources); sent || len(a.certs) == 0 {
		tenant, err := a.tokenTenant(sources)
		return identity{tenant: tenant}, err
	}
	p, ok := peer.FromContext(ctx)
	if !ok {
		return identity{}, nil
	}
	var state *tls.ConnectionState
	if info, isTLS := p.AuthInfo.(credentials.TLSInfo); isTLS {
		state = &info.State
	}
	return a.certIdentity(state)
}

// GetHTTPHandler gives OTLP/HTTP receivers the certificate check the
// authenticator cannot do there: a request the authenticator let through
// without an identity needs a verified certificate of a listed name.
func (a *authenticator) GetHTTPHandler(context.Context) (extensionmiddleware.WrapHTTPHandlerFunc, error) {
	return func(_ context.Context, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if client.FromContext(r.Context()).Auth == nil {
				id, err := a.certIdentity(r.TLS)
				if err != nil {
					a.account.Refuse(conventions.UnknownTenant, completeness.RequestAuth)
					http.Error(w, err.Error(), http.StatusUnauthorized)
					return
				}
				r = r.WithContext(withIdentity(r.Context(), id))
			}
			next.ServeHTTP(w, r)
		}), nil
	}, nil
}

func (a *authenticator) tokenTenant(sources map[string][]string) (string, error) {
	token, ok := bearer(sources)
	if !ok {
		return "", errNoToken
	}
	sum := sha256.Sum256([]byte(token))
	// Compare with every entry, without stopping at a match, so the time
	// taken does not tell which token matched.
	tenant := ""
	for _, e := range a.tokens {
		if subtle.ConstantTimeCompare(sum[:], e.hash) == 1 {
			tenant = e.tenant
		}
	}
	if tenant == "" {
		return "", errBadToken
	}
	return tenant, nil
}

// certIdentity returns the tenant or relay of a verified client
// certificate: every listed name it carries must belong to the same one,
// so a certificate that names a tenant and a relay is refused.
func (a *authenticator) certIdentity(state *tls.ConnectionState) (identity, error) {
	if state == nil || len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return identity{}, errNoCert
	}
	leaf := state.VerifiedChains[0][0]
	names := append(append([]string{leaf.Subject.CommonName}, leaf.DNSNames...), leaf.EmailAddresses...)
	for _, u := range leaf.URIs {
		names = append(names, u.String())
	}
	var id identity
	for _, n := range names {
		found, ok := a.certs[n]
		if !ok {
			continue
		}
		if id != (identity{}) && found != id {
			return identity{}, errBadCert
		}
		id = found
	}
	if id == (identity{}) {
		return identity{}, errBadCert
	}
	return id, nil
}

func withIdentity(ctx context.Context, id identity) context.Context {
	cl := client.FromContext(ctx)
	cl.Auth = authData{id}
	return client.NewContext(ctx, cl)
}

// authorization returns the Authorization values: HTTP gives the header
// canonicalised, gRPC metadata in lower case.
func authorization(sources map[string][]string) ([]string, bool) {
	v := sources["Authorization"]
	if len(v) == 0 {
		v = sources["authorization"]
	}
	return v, len(v) > 0
}

// bearer returns the token of the Authorization header.
func bearer(sources map[string][]string) (string, bool) {
	v, _ := authorization(sources)
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

// authData is the identity of an authenticated sender: a tenant or a
// relay, never both, so that a relay's certificate cannot act as a tenant
// and a tenant's credentials never make a relay.
type authData struct{ id identity }

func (d authData) GetAttribute(name string) any {
	switch {
	case name == conventions.AuthTenantAttribute && d.id.tenant != "":
		return d.id.tenant
	case name == conventions.AuthRelayAttribute && d.id.relay != "":
		return d.id.relay
	}
	return nil
}

func (d authData) GetAttributeNames() []string {
	if d.id.relay != "" {
		return []string{conventions.AuthRelayAttribute}
	}
	return []string{conventions.AuthTenantAttribute}
}

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
