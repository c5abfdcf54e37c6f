package lifecycle

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestPolicy(t *testing.T) {
	p := DefaultPolicy()
	p.Tenants = map[string]Retention{"acme": {ContentDays: 7}, "globex": {LedgerDays: 3650}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	for tenant, want := range map[string]Retention{
		"acme":    {ContentDays: 7, LedgerDays: DefaultLedgerDays},
		"globex":  {ContentDays: DefaultContentDays, LedgerDays: 3650},
		"initech": {ContentDays: DefaultContentDays, LedgerDays: DefaultLedgerDays},
	} {
		if got := p.For(tenant); got != want {
			t.Errorf("%s: %+v, want %+v", tenant, got, want)
		}
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if got := p.For("acme").ContentCutoff(now); !got.Equal(time.Date(2026, 2, 22, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("content cutoff %v", got)
	}
	for name, bad := range map[string]Policy{
		"zero default":      {Default: Retention{ContentDays: 0, LedgerDays: 1}},
		"negative override": {Default: Retention{1, 1}, Tenants: map[string]Retention{"a": {ContentDays: -1}}},
		"too long":          {Default: Retention{MaxDays + 1, 1}},
		"bad tenant":        {Default: Retention{1, 1}, Tenants: map[string]Retention{"": {}}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := New(ledgerStore, dirStore(t), Options{Policy: Policy{Default: Retention{ContentDays: -5, LedgerDays: 1}}}); err == nil {
		t.Error("New accepted an invalid policy")
	}
}

func TestParseTenantRetention(t *testing.T) {
	for in, want := range map[string]struct {
		tenant string
		r      Retention
	}{
		"acme=30:365": {"acme", Retention{30, 365}},
		"acme=30:":    {"acme", Retention{ContentDays: 30}},
		"acme=:730":   {"acme", Retention{LedgerDays: 730}},
		"team=a=7:7":  {"team=a", Retention{7, 7}},
		"ünïcode=1:2": {"ünïcode", Retention{1, 2}},
	} {
		tenant, r, err := ParseTenantRetention(in)
		if err != nil || tenant != want.tenant || r != want.r {
			t.Errorf("%q: %q %+v %v", in, tenant, r, err)
		}
	}
	for _, in := range []string{"", "acme", "=1:2", "acme=", "acme=:", "acme=1", "acme=x:1", "acme=0:1", "acme=1:-1",
		"acme=99999999999999999999:1", "a\x00b=1:1", "acme=1:2:3", strings.Repeat("a", 300) + "=1:1"} {
		if _, _, err := ParseTenantRetention(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func FuzzParseTenantRetention(f *testing.F) {
	for _, s := range []string{"acme=30:365", "acme=:1", "x=1:", "=", "a=b=c:d", "\xff=1:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tenant, r, err := ParseTenantRetention(s)
		if err != nil {
			if strings.Contains(err.Error(), s) && len(s) > 8 {
				t.Fatalf("error repeats the input: %v", err)
			}
			return
		}
		if !utf8.ValidString(tenant) || tenant == "" || !strings.HasPrefix(s, tenant+"=") {
			t.Fatalf("tenant %q from %q", tenant, s)
		}
		p := Policy{Default: Retention{1, 1}, Tenants: map[string]Retention{tenant: r}}
		if err := p.Validate(); err != nil {
			t.Fatalf("parsed %q into an invalid policy: %v", s, err)
		}
	})
}
