package conventions

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestTenant(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any // nil: attribute absent
		want  string
	}{
		{"absent", nil, DefaultTenant},
		{"plain", "acme", "acme"},
		{"unicode", "café-ä", "café-ä"},
		{"empty", "", DefaultTenant},
		{"longest", strings.Repeat("t", MaxTenantLen), strings.Repeat("t", MaxTenantLen)},
		{"too long", strings.Repeat("t", MaxTenantLen+1), DefaultTenant},
		{"invalid utf-8", "ac\xffme", DefaultTenant},
		{"nul", "ac\x00me", DefaultTenant},
		{"newline", "acme\nfake-log-line", DefaultTenant},
		{"del", "acme\x7f", DefaultTenant},
		{"int", int64(42), "42"},
	} {
		m := pcommon.NewMap()
		switch v := tc.value.(type) {
		case string:
			m.PutStr(TenantAttribute, v)
		case int64:
			m.PutInt(TenantAttribute, v)
		}
		if got := Tenant(m, DefaultTenant); got != tc.want {
			t.Errorf("%s: Tenant = %q, want %q", tc.name, got, tc.want)
		}
	}
}
