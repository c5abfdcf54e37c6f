package tenantauthextension

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/docketlabs/docket/extensions/tenantauthextension/internal/metadata"
)

const (
	acmeHash   = "db98a7558a2dc127f14b19601506cb3f28162c2e0055af6dc392f6e13a58c6be" // "s3cret-acme"
	globexHash = "d37d0a0f5bad219ebee4a7530f02e3dca5c948f317466f50bb6e9bba5d06dee7" // "s3cret-globex"
)

func TestLoadConfig(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	for _, tt := range []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: &Config{Tokens: []Token{{Tenant: "acme", SHA256: acmeHash}}, TokensFile: "testdata/tokens"}},
		{name: "certificates", want: &Config{Certificates: []Certificate{{Tenant: "acme", Name: "billing.acme.internal"}, {Tenant: "acme", Name: "spiffe://acme/billing"}}}},
		{name: "no_tokens", wantErr: "set tokens, tokens_file and/or certificates"},
		{name: "cert_two_tenants", wantErr: `name "billing.acme.internal" is listed for tenants "acme" and "globex"`},
		{name: "cert_no_name", wantErr: "certificates[0]: name must not be empty"},
		{name: "bad_hash", wantErr: "sha256 must be 64 hex digits"},
		{name: "bad_tenant", wantErr: "without control characters"},
		{name: "two_tenants", wantErr: `the same token is listed for tenants "acme" and "globex"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sub, err := cm.Sub(component.NewIDWithName(metadata.Type, tt.name).String())
			require.NoError(t, err)
			cfg := NewFactory().CreateDefaultConfig()
			require.NoError(t, sub.Unmarshal(cfg))
			err = confmap.Validate(cfg)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, cfg)
		})
	}
}
