package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/access"
)

func TestPasswordHashRoundTrip(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=65536,t=3,p=2$") {
		t.Fatalf("hash %q is not an Argon2id PHC string with the documented parameters", h)
	}
	if ok, err := VerifyPassword(h, "correct horse battery"); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, _ := VerifyPassword(h, "correct horse batterY"); ok {
		t.Fatal("wrong password accepted")
	}
	h2, _ := HashPassword("correct horse battery")
	if h == h2 {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	if _, err := HashPassword("short"); !errors.Is(err, ErrWeakPassword) {
		t.Fatalf("short password: %v", err)
	}
}

func TestVerifyRefusesTamperedParameters(t *testing.T) {
	for _, phc := range []string{
		"", "$argon2i$v=19$m=65536,t=3,p=2$c2FsdA$aGFzaA",
		"$argon2id$v=19$m=4294967295,t=3,p=2$c2FsdHNhbHQ$aGFzaGhhc2g", // 4 TiB of memory
		"$argon2id$v=19$m=65536,t=0,p=2$c2FsdHNhbHQ$aGFzaGhhc2g",
		"$argon2id$v=18$m=65536,t=3,p=2$c2FsdHNhbHQ$aGFzaGhhc2g",
		"$argon2id$v=19$m=65536,t=3,p=2$!!$aGFzaGhhc2g",
	} {
		if ok, err := VerifyPassword(phc, "whatever password"); ok || err == nil {
			t.Errorf("%q: ok=%v err=%v, want a refusal", phc, ok, err)
		}
	}
}

func TestFirstStartCreatesAdminWithOneTimePassword(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	users, oneTime, err := OpenUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(oneTime) < 20 {
		t.Fatalf("one-time password %q is too short", oneTime)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("users file: %v mode %v, want 0600", err, info.Mode())
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), oneTime) {
		t.Fatal("the users file holds the password in clear")
	}
	u, err := users.Authenticate("admin", oneTime)
	if err != nil || !u.MustChangePassword || u.Grants[access.AllTenants] != access.RoleAdmin {
		t.Fatalf("admin: %+v %v", u, err)
	}
	// A second start finds the file and creates nothing.
	again, second, err := OpenUsers(path)
	if err != nil || second != "" {
		t.Fatalf("second open: %q %v", second, err)
	}
	if err := again.ChangePassword("admin", oneTime, "a much better passphrase"); err != nil {
		t.Fatal(err)
	}
	reopened, _, _ := OpenUsers(path)
	if _, err := reopened.Authenticate("admin", oneTime); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("old password after change: %v", err)
	}
	if u, err := reopened.Authenticate("admin", "a much better passphrase"); err != nil || u.MustChangePassword {
		t.Fatalf("new password: %+v %v", u, err)
	}
	if _, err := reopened.Authenticate("nobody", "a much better passphrase"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("unknown user: %v", err)
	}
}

func TestGrantsPerTenant(t *testing.T) {
	id := Identity{User: "u", Grants: Grants{"acme": access.RoleAuditor, "globex": access.RoleViewer}}
	if p := id.Principal("acme"); p.Role != access.RoleAuditor || !p.CanReveal() || !p.MayAccessTenant("acme") || p.MayAccessTenant("globex") {
		t.Fatalf("acme principal: %+v", p)
	}
	if p := id.Principal("globex"); p.CanReveal() {
		t.Fatalf("globex principal may reveal: %+v", p)
	}
	if p := id.Principal("initech"); p.Role != "" {
		t.Fatalf("ungranted tenant: %+v", p)
	}
	if got := id.Tenants(access.RoleViewer); strings.Join(got, ",") != "acme,globex" {
		t.Fatalf("viewer tenants %v", got)
	}
	if got := id.Tenants(access.RoleAuditor); strings.Join(got, ",") != "acme" {
		t.Fatalf("auditor tenants %v", got)
	}
	if id.HasAnywhere(access.RoleAdmin) {
		t.Fatal("no admin grant, but HasAnywhere(admin)")
	}
	all := Identity{User: "v", Grants: Grants{"*": access.RoleViewer, "acme": access.RoleAdmin}}
	if all.Role("acme") != access.RoleAdmin || all.Role("other") != access.RoleViewer {
		t.Fatalf("roles: acme=%s other=%s", all.Role("acme"), all.Role("other"))
	}
	if err := (Grants{"acme": "owner"}).Validate(); err == nil {
		t.Fatal("unknown role accepted")
	}
}

func newBuiltin(t *testing.T) (*Authenticator, string) {
	t.Helper()
	a, oneTime, err := New(DefaultConfig(filepath.Join(t.TempDir(), "users.json")))
	if err != nil {
		t.Fatal(err)
	}
	return a, oneTime
}

func signIn(t *testing.T, a *Authenticator, user, password string) (*http.Cookie, Session, error) {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/api/v1/session", nil)
	s, err := a.SignIn(w, r, user, password)
	for _, c := range w.Result().Cookies() {
		if c.Name == CookieName {
			return c, s, err
		}
	}
	return nil, s, err
}

func TestSessionCookieAndCSRF(t *testing.T) {
	a, oneTime := newBuiltin(t)
	c, s, err := signIn(t, a, "admin", oneTime)
	if err != nil || c == nil {
		t.Fatalf("sign in: %v cookie %v", err, c)
	}
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Domain != "" {
		t.Fatalf("cookie attributes: %+v", c)
	}
	if !s.MustChangePassword {
		t.Fatal("one-time password session does not require a change")
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(c)
	got, err := a.Identify(r)
	if err != nil || got.User != "admin" || got.CSRFToken != s.CSRFToken {
		t.Fatalf("identify: %+v %v", got, err)
	}
	post := httptest.NewRequest(http.MethodPost, "/", nil)
	post.AddCookie(c)
	if a.CheckCSRF(post, got) {
		t.Fatal("CSRF check passed without a token")
	}
	post.Header.Set(CSRFHeader, "x"+s.CSRFToken)
	if a.CheckCSRF(post, got) {
		t.Fatal("CSRF check passed with a wrong token")
	}
	post.Header.Set(CSRFHeader, s.CSRFToken)
	if !a.CheckCSRF(post, got) {
		t.Fatal("CSRF check failed with the session's token")
	}
	a.SignOut(httptest.NewRecorder(), got)
	if _, err := a.Identify(r); !errors.Is(err, ErrNoSession) {
		t.Fatalf("after sign-out: %v", err)
	}
	forged := httptest.NewRequest(http.MethodGet, "/", nil)
	forged.AddCookie(&http.Cookie{Name: CookieName, Value: "guessed"})
	if _, err := a.Identify(forged); !errors.Is(err, ErrNoSession) {
		t.Fatalf("forged cookie: %v", err)
	}
}

func TestSessionExpiry(t *testing.T) {
	a, oneTime := newBuiltin(t)
	now := time.Now()
	a.now = func() time.Time { return now }
	c, _, err := signIn(t, a, "admin", oneTime)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(c)
	now = now.Add(29 * time.Minute)
	if _, err := a.Identify(r); err != nil {
		t.Fatalf("within the idle timeout: %v", err)
	}
	now = now.Add(31 * time.Minute)
	if _, err := a.Identify(r); !errors.Is(err, ErrNoSession) {
		t.Fatalf("after 31 idle minutes: %v", err)
	}
	// Kept busy, a session still ends at its maximum age.
	c, _, _ = signIn(t, a, "admin", oneTime)
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.AddCookie(c)
	for i := 0; i < 25; i++ {
		now = now.Add(29 * time.Minute)
		if _, err := a.Identify(r); err != nil {
			if time.Duration(i+1)*29*time.Minute <= 12*time.Hour {
				t.Fatalf("ended after %d busy steps: %v", i+1, err)
			}
			return
		}
	}
	t.Fatal("a busy session outlived its maximum age")
}

func TestSignInThrottlesGuessing(t *testing.T) {
	a, oneTime := newBuiltin(t)
	// Other names each time, so that only the address's budget counts.
	for i := 0; i < maxFailures; i++ {
		if _, _, err := signIn(t, a, fmt.Sprintf("user%d", i), "wrong password!"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	if _, _, err := signIn(t, a, "admin", oneTime); !errors.Is(err, ErrTooManyAttempts) {
		t.Fatalf("after %d failures the right password gave %v, want throttling", maxFailures, err)
	}
}

// TestAccountBackoff: guesses at one account from many addresses meet a
// doubling wait after a few failures; a success clears it.
func TestAccountBackoff(t *testing.T) {
	a, oneTime := newBuiltin(t)
	now := time.Now()
	a.now = func() time.Time { return now }
	guess := func(i int, password string) error {
		return signInFrom(a, fmt.Sprintf("203.0.113.%d", i+1), "admin", password)
	}
	for i := 0; i < freeAccountFailures+1; i++ {
		if err := guess(i, "wrong password!"); !errors.Is(err, ErrBadCredentials) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if err := guess(50, oneTime); !errors.Is(err, ErrTooManyAttempts) {
		t.Fatalf("within the backoff: %v, want throttling", err)
	}
	now = now.Add(accountBackoffBase)
	if err := guess(51, "wrong password!"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("after the backoff: %v", err)
	}
	now = now.Add(accountBackoffBase) // the wait doubled
	if err := guess(52, oneTime); !errors.Is(err, ErrTooManyAttempts) {
		t.Fatalf("within the doubled backoff: %v, want throttling", err)
	}
	now = now.Add(accountBackoffBase)
	if err := guess(53, oneTime); err != nil {
		t.Fatalf("right password after the backoff: %v", err)
	}
	if err := guess(54, "wrong password!"); !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("a success did not clear the backoff: %v", err)
	}
	// Unknown names back off the same way, so backoff does not tell
	// which accounts exist.
	for i := 0; i <= freeAccountFailures; i++ {
		_ = signInFrom(a, fmt.Sprintf("198.51.100.%d", i+1), "nobody", "wrong password!")
	}
	if err := signInFrom(a, "198.51.100.99", "nobody", "wrong password!"); !errors.Is(err, ErrTooManyAttempts) {
		t.Fatalf("unknown name: %v, want throttling", err)
	}
}

func TestChangePasswordEndsOtherSessions(t *testing.T) {
	a, oneTime := newBuiltin(t)
	c1, s1, _ := signIn(t, a, "admin", oneTime)
	c2, _, _ := signIn(t, a, "admin", oneTime)
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	if err := a.ChangePassword(r, s1, oneTime, "the new passphrase"); err != nil {
		t.Fatal(err)
	}
	r1 := httptest.NewRequest(http.MethodGet, "/", nil)
	r1.AddCookie(c1)
	if s, err := a.Identify(r1); err != nil || s.MustChangePassword {
		t.Fatalf("changing session: %+v %v", s, err)
	}
	r2 := httptest.NewRequest(http.MethodGet, "/", nil)
	r2.AddCookie(c2)
	if _, err := a.Identify(r2); !errors.Is(err, ErrNoSession) {
		t.Fatalf("other session after password change: %v", err)
	}
}

func TestProxyMode(t *testing.T) {
	cfg := DefaultConfig("")
	cfg.Mode = ModeProxy
	cfg.Proxy.TrustedProxies = []string{"10.0.0.0/8", "::1"}
	cfg.Proxy.Groups = map[string]Grants{"support": {"acme": access.RoleViewer}, "audit": {"acme": access.RoleAuditor}}
	a, _, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req := func(remote, user string, groups ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		if user != "" {
			r.Header.Set("X-Forwarded-User", user)
		}
		for _, g := range groups {
			r.Header.Add("X-Forwarded-Groups", g)
		}
		return r
	}
	s, err := a.Identify(req("10.1.2.3:5555", "alice", "support, audit"))
	if err != nil || s.Role("acme") != access.RoleAuditor || s.Mode != ModeProxy {
		t.Fatalf("alice: %+v %v", s, err)
	}
	if _, err := a.Identify(req("192.168.1.1:5555", "alice", "audit")); !errors.Is(err, ErrUntrustedProxy) {
		t.Fatalf("untrusted address: %v", err)
	}
	if _, err := a.Identify(req("[::1]:5555", "bob", "marketing")); !errors.Is(err, ErrNoGrants) {
		t.Fatalf("no mapped group: %v", err)
	}
	if _, err := a.Identify(req("10.1.2.3:5555", "")); err == nil {
		t.Fatal("request without a user header was identified")
	}
	if _, err := a.Identify(req("10.1.2.3:5555", "eve\r\nX: y", "audit")); err == nil {
		t.Fatal("a user header with CR/LF was accepted")
	}
	s2, _ := a.Identify(req("10.1.2.3:5555", "alice", "audit"))
	if s2.CSRFToken != s.CSRFToken || s.CSRFToken == "" {
		t.Fatal("proxy CSRF token is not stable per user")
	}
	other, _ := a.Identify(req("10.1.2.3:5555", "mallory", "audit"))
	if other.CSRFToken == s.CSRFToken {
		t.Fatal("two users share a CSRF token")
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []func(*Config){
		func(c *Config) { c.Mode = "ldap" },
		func(c *Config) { c.UsersFile = "" },
		func(c *Config) { c.Mode = ModeProxy },
		func(c *Config) { c.Mode, c.Proxy.TrustedProxies = ModeProxy, []string{"not-an-ip"} },
		func(c *Config) {
			c.Mode, c.Proxy.TrustedProxies = ModeProxy, []string{"127.0.0.1"}
			c.Proxy.Groups = map[string]Grants{"g": {"acme": "root"}}
		},
		func(c *Config) { c.SessionIdleTimeout = 0 },
	}
	for i, mutate := range bad {
		c := DefaultConfig("users.json")
		mutate(&c)
		if err := c.Validate(); err == nil {
			b, _ := json.Marshal(c)
			t.Errorf("case %d accepted: %s", i, b)
		}
	}
	c := DefaultConfig("users.json")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestAccountsAddedElsewhereAreSeen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "users.json")
	server, _, err := OpenUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	cli, _, err := OpenUsers(path) // `docket ui users add` in another process
	if err != nil {
		t.Fatal(err)
	}
	// Distinct modification times even on coarse file systems.
	time.Sleep(10 * time.Millisecond)
	pw, err := cli.Add("carol", Grants{"acme": access.RoleViewer})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Authenticate("carol", pw); err != nil {
		t.Fatalf("the server does not see an account added by another process: %v", err)
	}
	// A change made by the server keeps the other process's account.
	if _, err := server.Add("dave", Grants{"acme": access.RoleViewer}); err != nil {
		t.Fatal(err)
	}
	again, _, _ := OpenUsers(path)
	if _, ok, _ := again.Lookup("carol"); !ok {
		t.Fatal("carol was lost when the server wrote the file")
	}
}

func TestCommonPasswordsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		password string
		common   bool
	}{
		{"masterbating", true},                  // listed, 12 characters
		{"Password2024!", true},                 // listed, padded to length
		{"!!Football1234", true},                // padded on both sides
		{"123456789012", true},                  // digits only
		{"abcabcabcabc", true},                  // one piece repeated
		{"zzzzzzzzzzzz", true},                  //
		{"correct horse battery", false},        // words, not a listed one
		{"a much better passphrase", false},     //
		{"Tr0ub4dor&3-horse", false},            //
		{GeneratePassword(), false},             // what accounts start with
		{"dragonfly over the 2 bridges", false}, // a listed word inside a phrase
	} {
		err := checkPassword(tc.password)
		if got := errors.Is(err, ErrCommonPassword); got != tc.common {
			t.Errorf("%q: %v, want common=%v", tc.password, err, tc.common)
		}
	}
	if _, err := HashPassword("Password2024!"); !errors.Is(err, ErrCommonPassword) {
		t.Fatalf("hashing a common password: %v", err)
	}
	a, oneTime := newBuiltin(t)
	_, s, _ := signIn(t, a, "admin", oneTime)
	if err := a.ChangePassword(httptest.NewRequest(http.MethodPost, "/", nil), s, oneTime, "Baseball2024!!"); !errors.Is(err, ErrCommonPassword) {
		t.Fatalf("changing to a common password: %v", err)
	}
}
