package contentstore

import (
	"errors"
	"strings"
	"testing"
)

func TestRefRoundTrip(t *testing.T) {
	digest := strings.Repeat("ab", 32)
	for _, tenant := range []string{"default", "acme.eu-1", "Tenant_9", ".hidden", "..", "a/b", "a%2Fb", "고객사", "sp ace", "x?y#z"} {
		r := Ref{Tenant: tenant, Kind: "input.messages", Digest: digest}
		s := r.String()
		if strings.Count(s[len(Scheme+"://"):], "/") != 2 {
			t.Fatalf("tenant %q: separator leaked into %q", tenant, s)
		}
		got, err := ParseRef(s)
		if err != nil || got != r {
			t.Fatalf("tenant %q: ParseRef(%q) = %+v, %v", tenant, s, got, err)
		}
		if seg := escapeTenant(tenant); seg == "." || seg == ".." || strings.HasPrefix(seg, ".") {
			t.Fatalf("tenant %q escapes to unsafe segment %q", tenant, seg)
		}
	}
}

func TestParseRefRejects(t *testing.T) {
	good := "docket-content://default/input.messages/" + strings.Repeat("0", 64)
	if _, err := ParseRef(good); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"", "http://default/input.messages/" + strings.Repeat("0", 64),
		"docket-content://default/input.messages/" + strings.Repeat("0", 63),
		"docket-content://default/input.messages/" + strings.Repeat("A", 64),
		"docket-content://default/Input/" + strings.Repeat("0", 64),
		"docket-content://default/../" + strings.Repeat("0", 64),
		"docket-content:///input.messages/" + strings.Repeat("0", 64),
		"docket-content://default/input.messages/" + strings.Repeat("0", 64) + "/x",
		"docket-content://%2/input.messages/" + strings.Repeat("0", 64),
		"docket-content://%61cme/input.messages/" + strings.Repeat("0", 64), // non-canonical spelling of "acme"
		"docket-content://%00/input.messages/" + strings.Repeat("0", 64),
	} {
		if _, err := ParseRef(s); !errors.Is(err, ErrInvalidRef) && !errors.Is(err, ErrInvalidTenant) && !errors.Is(err, ErrInvalidKind) {
			t.Errorf("ParseRef(%q) = %v, want an invalid-reference error", s, err)
		}
	}
}

func TestValidateTenant(t *testing.T) {
	for _, bad := range []string{"", strings.Repeat("a", MaxTenantLen+1), "bad\xff", "tab\there", "nul\x00", strings.Repeat("가", 40)} {
		if ValidateTenant(bad) == nil {
			t.Errorf("tenant %q accepted", bad)
		}
	}
	for _, ok := range []string{"default", strings.Repeat("a", MaxTenantLen), "고객사"} {
		if err := ValidateTenant(ok); err != nil {
			t.Errorf("tenant %q: %v", ok, err)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	f.Add("docket-content://default/input.messages/" + strings.Repeat("0", 64))
	f.Add("docket-content://%2Ehidden/prompt/" + strings.Repeat("f", 64))
	f.Add("docket-content://a%2Fb/x/y")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		if r.String() != s {
			t.Fatalf("ParseRef(%q).String() = %q: two spellings of one reference", s, r.String())
		}
		if r.validate() != nil {
			t.Fatalf("ParseRef(%q) returned an invalid reference", s)
		}
	})
}
