package tenantprocessor

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/oidcauthextension"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"google.golang.org/grpc/codes"
)

// oidcProvider is an OpenID provider on a local port: discovery document,
// signing keys, and tokens it signs for a subject.
type oidcProvider struct {
	*httptest.Server
	signer jose.Signer
}

func newOIDCProvider(t *testing.T) *oidcProvider {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}}, nil)
	require.NoError(t, err)
	p := &oidcProvider{signer: signer}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": p.URL, "jwks_uri": p.URL + "/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	p.Server = httptest.NewServer(mux)
	t.Cleanup(p.Close)
	return p
}

func (p *oidcProvider) token(t *testing.T, subject string) string {
	claims, err := json.Marshal(map[string]any{"iss": p.URL, "aud": "docket-ingest", "sub": subject,
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	jws, err := p.signer.Sign(claims)
	require.NoError(t, err)
	s, err := jws.CompactSerialize()
	require.NoError(t, err)
	return s
}

// TestOIDCIdentities runs contrib's oidc authenticator against a real
// OpenID provider and the processor's identities map behind it: the
// subject chooses the tenant, an unlisted subject is refused.
func TestOIDCIdentities(t *testing.T) {
	provider := newOIDCProvider(t)
	f := oidcauthextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*oidcauthextension.Config)
	cfg.Providers = []oidcauthextension.ProviderCfg{{IssuerURL: provider.URL, Audience: "docket-ingest"}}
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	require.NoError(t, err)
	require.NoError(t, ext.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, ext.Shutdown(context.Background())) })
	auth := ext.(extensionauth.Server)

	h := newHarness(t, func(c *Config) {
		c.AuthAttribute = "subject"
		c.Identities = map[string]string{"svc-billing": "acme"}
	})
	send := func(subject, claim string) error {
		ctx, err := auth.Authenticate(context.Background(), map[string][]string{"authorization": {"Bearer " + provider.token(t, subject)}})
		require.NoError(t, err)
		return h.traces(ctx, traces(claim))
	}
	require.NoError(t, send("svc-billing", ""))
	requireCode(t, send("svc-billing", "globex"), codes.PermissionDenied)
	requireCode(t, send("svc-unlisted", ""), codes.PermissionDenied)
	tenants, _ := h.stored()
	require.Equal(t, []string{"acme"}, tenants)
}
