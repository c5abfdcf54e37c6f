package tenantprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/docketlabs/docket/internal/configtest"
)

func TestLoadConfig(t *testing.T) {
	require.NoError(t, componenttest.CheckConfigStruct(NewFactory().CreateDefaultConfig()))
	def := createDefaultConfig()
	for _, tt := range []struct {
		name    string
		want    *Config
		wantErr string
	}{
		{name: "", want: def},
		{name: "flag", want: &Config{AuthAttribute: "tenant", OnMismatch: MismatchFlag, DefaultTenant: "default"}},
		{name: "oidc", want: &Config{AuthAttribute: "subject", OnMismatch: MismatchRefuse, DefaultTenant: "default",
			Identities: map[string]string{"svc-billing@example.com": "acme", "svc-search@example.com": "globex"}}},
		{name: "dev", want: &Config{AuthAttribute: "tenant", OnMismatch: MismatchRefuse, TrustSenderAttribute: true, DefaultTenant: "local"}},
		{name: "bad_mismatch", wantErr: `on_mismatch: "ignore" is neither refuse nor flag`},
		{name: "no_auth_attribute", wantErr: "auth_attribute must not be empty"},
		{name: "bad_default", wantErr: "default_tenant: must be"},
		{name: "bad_identity", wantErr: `identities["svc"]: tenant must be`},
	} {
		t.Run(tt.name, func(t *testing.T) { configtest.Check(t, NewFactory(), tt.name, tt.want, tt.wantErr) })
	}
}
