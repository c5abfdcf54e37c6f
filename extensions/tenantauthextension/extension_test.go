package tenantauthextension

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/extensions/tenantauthextension/internal/metadata"
	"github.com/docketlabs/docket/internal/conventions"
)

func started(t *testing.T, cfg *Config) extensionauth.Server {
	t.Helper()
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	return ext.(extensionauth.Server)
}

func TestAuthenticate(t *testing.T) {
	auth := started(t, &Config{Tokens: []Token{{Tenant: "acme", SHA256: acmeHash}}, TokensFile: filepath.Join("testdata", "tokens")})
	for _, tc := range []struct {
		name    string
		sources map[string][]string
		tenant  string // "" means refused
	}{
		{"http header", map[string][]string{"Authorization": {"Bearer s3cret-acme"}}, "acme"},
		{"grpc metadata", map[string][]string{"authorization": {"Bearer s3cret-globex"}}, "globex"},
		{"scheme in any case", map[string][]string{"Authorization": {"bearer s3cret-acme"}}, "acme"},
		{"no header", map[string][]string{"X-Other": {"s3cret-acme"}}, ""},
		{"wrong token", map[string][]string{"Authorization": {"Bearer s3cret-acmf"}}, ""},
		{"the stored hash as token", map[string][]string{"Authorization": {"Bearer " + acmeHash}}, ""},
		{"no scheme", map[string][]string{"Authorization": {"s3cret-acme"}}, ""},
		{"basic scheme", map[string][]string{"Authorization": {"Basic s3cret-acme"}}, ""},
		{"empty token", map[string][]string{"Authorization": {"Bearer "}}, ""},
		{"two headers", map[string][]string{"Authorization": {"Bearer s3cret-acme", "Bearer s3cret-globex"}}, ""},
		{"huge token", map[string][]string{"Authorization": {"Bearer " + strings.Repeat("x", 1<<20)}}, ""},
	} {
		// A refusal leaves no identity behind.
		ctx, err := auth.Authenticate(context.Background(), tc.sources)
		if tc.tenant == "" {
			assert.Error(t, err, tc.name)
			assert.Nil(t, client.FromContext(ctx).Auth, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		info := client.FromContext(ctx)
		require.NotNil(t, info.Auth, tc.name)
		assert.Equal(t, tc.tenant, info.Auth.GetAttribute(conventions.AuthTenantAttribute), tc.name)
		assert.Equal(t, []string{conventions.AuthTenantAttribute}, info.Auth.GetAttributeNames(), tc.name)
	}
}

func TestErrorsNameNoToken(t *testing.T) {
	auth := started(t, &Config{Tokens: []Token{{Tenant: "acme", SHA256: acmeHash}}})
	_, err := auth.Authenticate(context.Background(), map[string][]string{"Authorization": {"Bearer guess-123"}})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "guess-123")
}

func TestTokensFile(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "tokens")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	for _, tc := range []struct{ body, wantErr string }{
		{"globex " + globexHash + " extra\n", "line 1: want"},
		{"# only a comment\n\n", "lists no token"},
		{"globex 1234\n", "sha256 must be 64 hex digits"},
		{"acme " + globexHash + "\nglobex " + globexHash + "\n", "listed for tenants"},
	} {
		ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), &Config{TokensFile: write(tc.body)})
		require.NoError(t, err)
		err = ext.Start(context.Background(), componenttest.NewNopHost())
		require.ErrorContains(t, err, tc.wantErr)
		assert.NotContains(t, err.Error(), globexHash, "an error repeats a stored hash")
	}
	ext, err := NewFactory().Create(context.Background(), extensiontest.NewNopSettings(metadata.Type), &Config{TokensFile: filepath.Join(dir, "missing")})
	require.NoError(t, err)
	require.ErrorContains(t, ext.Start(context.Background(), componenttest.NewNopHost()), "read tokens_file")
}

// verified is the TLS state of a connection whose client certificate the
// receiver verified.
func verified(cn string, dns ...string) *tls.ConnectionState {
	leaf := &x509.Certificate{Subject: pkix.Name{CommonName: cn}, DNSNames: dns}
	return &tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{leaf}}}
}

func grpcPeer(state *tls.ConnectionState) context.Context {
	p := &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 0, 0, 7), Port: 5000}}
	if state != nil {
		p.AuthInfo = credentials.TLSInfo{State: *state}
	}
	return peer.NewContext(context.Background(), p)
}

func TestClientCertificates(t *testing.T) {
	auth := started(t, &Config{
		Tokens: []Token{{Tenant: "acme", SHA256: acmeHash}},
		Certificates: []Certificate{
			{Tenant: "acme", Name: "billing.acme.internal"},
			{Tenant: "globex", Name: "search.globex.internal"},
		},
	})
	tenantOf := func(ctx context.Context) any {
		if info := client.FromContext(ctx); info.Auth != nil {
			return info.Auth.GetAttribute(conventions.AuthTenantAttribute)
		}
		return nil
	}
	for _, tc := range []struct {
		name   string
		state  *tls.ConnectionState
		tenant any // nil: refused
	}{
		{"by SAN", verified("x", "billing.acme.internal"), "acme"},
		{"by common name", verified("search.globex.internal"), "globex"},
		{"unlisted", verified("intruder", "intruder.example"), nil},
		{"names of two tenants", verified("search.globex.internal", "billing.acme.internal"), nil},
		{"no certificate", &tls.ConnectionState{}, nil},
		{"plaintext", nil, nil},
	} {
		ctx, err := auth.Authenticate(grpcPeer(tc.state), map[string][]string{})
		if tc.tenant == nil {
			assert.Error(t, err, tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, tc.tenant, tenantOf(ctx), tc.name)
	}
	// A token, when sent, decides alone: a wrong one is not rescued by the certificate.
	_, err := auth.Authenticate(grpcPeer(verified("billing.acme.internal")), map[string][]string{"authorization": {"Bearer guess"}})
	assert.Error(t, err)

	// OTLP/HTTP: the authenticator lets a request without a token pass
	// without identity; the middleware takes the certificate or refuses.
	ctx, err := auth.Authenticate(context.Background(), map[string][]string{})
	require.NoError(t, err)
	assert.Nil(t, tenantOf(ctx))
	wrap, err := auth.(extensionmiddleware.HTTPServer).GetHTTPHandler(context.Background())
	require.NoError(t, err)
	var seen any
	h, err := wrap(context.Background(), http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = tenantOf(r.Context()) }))
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		state  *tls.ConnectionState
		code   int
		tenant any
	}{
		{"certificate", context.Background(), verified("x", "search.globex.internal"), http.StatusOK, "globex"},
		{"unlisted certificate", context.Background(), verified("intruder"), http.StatusUnauthorized, nil},
		{"plaintext", context.Background(), nil, http.StatusUnauthorized, nil},
		{"token already authenticated", withIdentity(context.Background(), identity{tenant: "acme"}), verified("x", "search.globex.internal"), http.StatusOK, "acme"},
	} {
		seen = nil
		r := httptest.NewRequestWithContext(tc.ctx, http.MethodPost, "/v1/traces", nil)
		r.TLS = tc.state
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, tc.code, w.Code, tc.name)
		assert.Equal(t, tc.tenant, seen, tc.name)
	}
}

// A relay's certificate gives the relay attribute and no tenant, on
// OTLP/gRPC (the authenticator sees the certificate) and OTLP/HTTP (the
// middleware does); a certificate that also carries a tenant's name is
// refused, and a tenant's credentials never give the relay attribute.
func TestRelayCertificates(t *testing.T) {
	auth := started(t, &Config{
		Tokens: []Token{{Tenant: "acme", SHA256: acmeHash}},
		Certificates: []Certificate{
			{Name: "docket-agent", Relay: true},
			{Tenant: "acme", Name: "billing.acme.internal"},
		},
	}).(*authenticator)
	auth.account = completeness.NewAccount()
	type seen struct{ tenant, relay any }
	of := func(ctx context.Context) seen {
		a := client.FromContext(ctx).Auth
		if a == nil {
			return seen{}
		}
		return seen{a.GetAttribute(conventions.AuthTenantAttribute), a.GetAttribute(conventions.AuthRelayAttribute)}
	}
	relay := seen{relay: "docket-agent"}
	for _, tc := range []struct {
		name    string
		state   *tls.ConnectionState
		sources map[string][]string
		want    *seen // nil: refused
	}{
		{"relay by SAN", verified("node-7", "docket-agent"), nil, &relay},
		{"relay by common name", verified("docket-agent"), nil, &relay},
		{"tenant certificate", verified("billing.acme.internal"), nil, &seen{tenant: "acme"}},
		{"relay and tenant names", verified("docket-agent", "billing.acme.internal"), nil, nil},
		{"relay certificate with a tenant's token", verified("docket-agent"), map[string][]string{"authorization": {"Bearer s3cret-acme"}}, &seen{tenant: "acme"}},
		{"relay certificate with a wrong token", verified("docket-agent"), map[string][]string{"authorization": {"Bearer guess"}}, nil},
	} {
		ctx, err := auth.Authenticate(grpcPeer(tc.state), tc.sources)
		if tc.want == nil {
			assert.Error(t, err, tc.name)
			assert.Equal(t, seen{}, of(ctx), tc.name)
			continue
		}
		require.NoError(t, err, tc.name)
		assert.Equal(t, *tc.want, of(ctx), tc.name)
		if tc.want.relay != nil {
			assert.Equal(t, []string{conventions.AuthRelayAttribute}, client.FromContext(ctx).Auth.GetAttributeNames(), tc.name)
		}
	}
	// otlpcheck asks for the tenant of a gRPC request it saw refused: a
	// relay's names none.
	tenant, err := auth.TenantOf(grpcPeer(verified("docket-agent")), map[string][]string{})
	require.NoError(t, err)
	assert.Empty(t, tenant)

	wrap, err := auth.GetHTTPHandler(context.Background())
	require.NoError(t, err)
	var got seen
	h, err := wrap(context.Background(), http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = of(r.Context()) }))
	require.NoError(t, err)
	for _, tc := range []struct {
		name  string
		state *tls.ConnectionState
		code  int
		want  seen
	}{
		{"relay", verified("x", "docket-agent"), http.StatusOK, relay},
		{"relay and tenant names", verified("docket-agent", "billing.acme.internal"), http.StatusUnauthorized, seen{}},
	} {
		got = seen{}
		r := httptest.NewRequestWithContext(context.Background(), http.MethodPost, "/v1/traces", nil)
		r.TLS = tc.state
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		assert.Equal(t, tc.code, w.Code, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}
	// The refusals (two gRPC, one HTTP) count under the unknown tenant.
	assert.Equal(t, int64(3), auth.account.Snapshot(nil).Tenants[0].RefusedRequests[completeness.RequestAuth])
}

// A refused request is counted under the unknown tenant; TenantOf, which
// the otlpcheck middleware asks for a request gRPC refused before
// authenticating it, answers the same and counts nothing.
func TestRefusalsCountedOnceUnderTheUnknownTenant(t *testing.T) {
	auth := started(t, &Config{Tokens: []Token{{Tenant: "acme", SHA256: acmeHash}}}).(*authenticator)
	auth.account = completeness.NewAccount()
	bad := map[string][]string{"authorization": {"Bearer guess"}}
	good := map[string][]string{"authorization": {"Bearer s3cret-acme"}}
	_, err := auth.Authenticate(context.Background(), bad)
	require.Error(t, err)
	_, err = auth.Authenticate(context.Background(), good)
	require.NoError(t, err)
	_, err = auth.TenantOf(context.Background(), bad)
	require.Error(t, err)
	tenant, err := auth.TenantOf(context.Background(), good)
	require.NoError(t, err)
	assert.Equal(t, "acme", tenant)
	got := map[string]map[completeness.Refusal]int64{}
	for _, tn := range auth.account.Snapshot(nil).Tenants {
		got[tn.Tenant] = tn.RefusedRequests
	}
	assert.Equal(t, map[string]map[completeness.Refusal]int64{
		conventions.UnknownTenant: {completeness.RequestAuth: 1, completeness.RequestMalformed: 0},
	}, got)
}
