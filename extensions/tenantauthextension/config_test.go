package tenantauthextension

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/docketlabs/docket/internal/configtest"
)

const (
	acmeHash   = "db98a7558a2dc127f14b19601506cb3f28162c2e0055af6dc392f6e13a58c6be" // "s3cret-acme"
	globexHash = "d37d0a0f5bad219ebee4a7530f02e3dca5c948f317466f50bb6e9bba5d06dee7" // "s3cret-globex"
)

func TestLoadConfig(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
	for _, tt := range []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: &Config{Tokens: []Token{{Tenant: "acme", SHA256: acmeHash}}, TokensFile: "testdata/tokens"}},
		{name: "certificates", want: &Config{Certificates: []Certificate{{Tenant: "acme", Name: "billing.acme.internal"}, {Tenant: "acme", Name: "spiffe://acme/billing"}}}},
		{name: "no_tokens", wantErr: "set tokens, tokens_file and/or certificates"},
		{name: "cert_two_tenants", wantErr: `name "billing.acme.internal" is listed for tenant "acme" and tenant "globex"`},
		{name: "relay", want: &Config{Certificates: []Certificate{{Name: "docket-agent", Relay: true}, {Tenant: "acme", Name: "billing.acme.internal"}}}},
		// A relay's certificate must not be able to act as a tenant.
		{name: "relay_with_tenant", wantErr: `certificates[0] ("docket-agent"): a relay is no tenant: set tenant or relay, not both`},
		{name: "relay_and_tenant_name", wantErr: `name "docket-agent" is listed for tenant "acme" and relay "docket-agent"`},
		{name: "cert_no_tenant", wantErr: "certificates[0]: tenant must be 1 to"},
		{name: "cert_no_name", wantErr: "certificates[0]: name must not be empty"},
		{name: "bad_hash", wantErr: "sha256 must be 64 hex digits"},
		{name: "bad_tenant", wantErr: "without control characters"},
		{name: "two_tenants", wantErr: `the same token is listed for tenants "acme" and "globex"`},
	} {
		t.Run(tt.name, func(t *testing.T) { configtest.Check(t, NewFactory(), tt.name, tt.want, tt.wantErr) })
	}
}
