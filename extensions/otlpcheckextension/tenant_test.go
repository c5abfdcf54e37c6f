package otlpcheckextension

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/client"

	"github.com/docketlabs/docket/internal/conventions"
)

// auth is what an authenticator leaves in client.Info.Auth.
type auth map[string]any

func (a auth) GetAttribute(k string) any { return a[k] }
func (auth) GetAttributeNames() []string { return nil }

// A malformed body counts under its sender's tenant; a relay's (an
// agent's) request names none of its own, and counts under _unknown.
func TestHTTPTenant(t *testing.T) {
	for _, tc := range []struct {
		name string
		auth client.AuthData
		want string
	}{
		{"tenant", auth{conventions.AuthTenantAttribute: "acme"}, "acme"},
		{"relay", auth{conventions.AuthRelayAttribute: "docket-agent"}, conventions.UnknownTenant},
		{"no identity", nil, conventions.UnknownTenant},
		{"invalid tenant", auth{conventions.AuthTenantAttribute: ""}, conventions.UnknownTenant},
	} {
		ctx := client.NewContext(context.Background(), client.Info{Auth: tc.auth})
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/traces", nil)
		assert.Equal(t, tc.want, httpTenant(r), tc.name)
	}
}
