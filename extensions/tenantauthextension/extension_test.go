package tenantauthextension

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/extension/extensiontest"

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
