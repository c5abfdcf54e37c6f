package api

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ui/auth"
)

// bearer is a client that sends only an API token: no cookie, no CSRF.
func (f *fixture) bearer(t *testing.T, token string) *client {
	c := f.client(t)
	c.token = token
	return c
}

// createToken creates a token as the signed-in admin c.
func (c *client) createToken(name string, grants auth.Grants) string {
	c.t.Helper()
	code, body := c.do("POST", "/api/v1/tokens", map[string]any{"name": name, "grants": grants, "expires_in_days": 30})
	if code != http.StatusCreated {
		c.t.Fatalf("create token %s: %d %s", name, code, body)
	}
	res := decodeJSON[struct {
		Token  string `json:"token"`
		Record struct {
			ID           string `json:"id"`
			SecretSHA256 string `json:"secret_sha256"`
		} `json:"record"`
	}](c.t, body)
	if !strings.HasPrefix(res.Token, auth.TokenPrefix+res.Record.ID+"_") || res.Record.SecretSHA256 != "" {
		c.t.Fatalf("created token: %s", body)
	}
	return res.Token
}

func (f *fixture) accessEntries(t *testing.T, actor string) []ledgerstore.AccessEntry {
	t.Helper()
	entries, err := store.AccessLog(t.Context(), ledgerstore.AccessFilter{Actor: actor, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

func TestTokenActsLikeAPersonAndIsRecorded(t *testing.T) {
	f := newFixture(t)
	admin := f.client(t)
	admin.signIn("admin")
	secret := admin.createToken("ticketing", auth.Grants{"acme": access.RoleAuditor})
	svc := f.bearer(t, secret)

	code, body := svc.do("GET", "/api/v1/session", nil)
	s := decodeJSON[auth.Session](t, body)
	if code != http.StatusOK || s.User != "service:ticketing" || s.Mode != auth.ModeToken || s.CSRFToken != "" {
		t.Fatalf("token session: %d %s", code, body)
	}
	if code, body := svc.do("GET", "/api/v1/evidence/"+f.trace, nil); code != http.StatusOK {
		t.Fatalf("evidence with a token: %d %s", code, body)
	}
	// A state change with the token alone: no CSRF token is needed.
	code, body = svc.do("POST", "/api/v1/reveal", map[string]string{"trace_id": f.trace, "ref": f.inputRef, "reason": "ticket 99"})
	if code != http.StatusOK || !strings.Contains(string(body), "my order") {
		t.Fatalf("reveal with a token: %d %s", code, body)
	}
	var actions []string
	for _, e := range f.accessEntries(t, "service:ticketing") {
		actions = append(actions, e.Action+"/"+e.Outcome+"/"+e.Role)
	}
	if strings.Join(actions, ",") != "reveal/allowed/auditor,view/allowed/auditor" {
		t.Fatalf("access log of the service account: %v", actions)
	}
	// The file holds the secret's hash only, mode 0600, and the last use.
	path := auth.TokensFileFor(filepath.Join(f.dir, "users.json"))
	raw := readFileMode(t, path, 0o600)
	if strings.Contains(raw, strings.SplitN(secret, "_", 3)[2]) {
		t.Fatal("the tokens file holds the secret")
	}
	code, body = admin.do("GET", "/api/v1/tokens", nil)
	list := decodeJSON[struct {
		Tokens []struct {
			auth.Token
			Status string `json:"status"`
		} `json:"tokens"`
	}](t, body)
	if code != http.StatusOK || len(list.Tokens) != 1 || list.Tokens[0].LastUsedAt == nil || list.Tokens[0].Status != "active" ||
		strings.Contains(string(body), "secret_sha256") {
		t.Fatalf("token list: %d %s", code, body)
	}
	// A service account cannot mint or revoke tokens, even as admin.
	adminSecret := admin.createToken("siem", auth.Grants{access.AllTenants: access.RoleAdmin})
	siem := f.bearer(t, adminSecret)
	if code, body := siem.do("POST", "/api/v1/tokens", map[string]any{"name": "more", "grants": auth.Grants{"acme": "admin"}, "expires_in_days": 1}); code != http.StatusForbidden {
		t.Fatalf("token minting a token: %d %s", code, body)
	}
	if code, _ := siem.do("GET", "/api/v1/access-log", nil); code != http.StatusOK {
		t.Fatalf("admin token reading the access log: %d", code)
	}
	// Names are never reused, so the access log stays unambiguous.
	if code, _ := admin.do("POST", "/api/v1/tokens", map[string]any{"name": "ticketing", "grants": auth.Grants{"acme": "viewer"}, "expires_in_days": 1}); code != http.StatusConflict {
		t.Fatalf("reused name: %d", code)
	}
}

func TestRevokedTokenIsRefused(t *testing.T) {
	f := newFixture(t)
	admin := f.client(t)
	admin.signIn("admin")
	secret := admin.createToken("exporter", auth.Grants{"acme": access.RoleAuditor})
	svc := f.bearer(t, secret)
	if code, _ := svc.do("GET", "/api/v1/calls", nil); code != http.StatusOK {
		t.Fatalf("before revocation: %d", code)
	}
	id := strings.SplitN(secret, "_", 3)[1]
	if code, body := admin.do("POST", "/api/v1/tokens/"+id+"/revoke", nil); code != http.StatusOK || !strings.Contains(string(body), `"status":"revoked"`) {
		t.Fatalf("revoke: %d %s", code, body)
	}
	for _, p := range []string{"/api/v1/calls", "/api/v1/evidence/" + f.trace, "/api/v1/session"} {
		if code, body := svc.do("GET", p, nil); code != http.StatusUnauthorized || !strings.Contains(string(body), "revoked") {
			t.Errorf("GET %s with a revoked token: %d %s", p, code, body)
		}
	}
	if code, _ := svc.do("POST", "/api/v1/reveal", map[string]string{"trace_id": f.trace, "ref": f.inputRef, "reason": "x"}); code != http.StatusUnauthorized {
		t.Errorf("reveal with a revoked token: %d", code)
	}
	// Revoked by the CLI (another process writing the file): refused at once.
	tokens, err := auth.OpenTokens(auth.TokensFileFor(filepath.Join(f.dir, "users.json")))
	if err != nil {
		t.Fatal(err)
	}
	secret2 := admin.createToken("exporter2", auth.Grants{"acme": access.RoleViewer})
	if _, err := tokens.Revoke(strings.SplitN(secret2, "_", 3)[1], "operator"); err != nil {
		t.Fatal(err)
	}
	if code, _ := f.bearer(t, secret2).do("GET", "/api/v1/calls", nil); code != http.StatusUnauthorized {
		t.Errorf("token revoked from another process: %d", code)
	}
	// A forged secret for a real ID, and garbage.
	for _, bad := range []string{auth.TokenPrefix + id + "_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "dkt_x", "Basic abc"} {
		if code, _ := f.bearer(t, bad).do("GET", "/api/v1/calls", nil); code != http.StatusUnauthorized {
			t.Errorf("token %q: %d", bad, code)
		}
	}
}

func TestExpiredTokenIsRefused(t *testing.T) {
	f := newFixture(t)
	tokens, err := auth.OpenTokens(auth.TokensFileFor(filepath.Join(f.dir, "users.json")))
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := tokens.Create("nightly", auth.Grants{"acme": access.RoleAdmin}, "operator", time.Now().Add(-time.Second))
	if err != nil {
		t.Fatal(err)
	}
	code, body := f.bearer(t, secret).do("GET", "/api/v1/calls", nil)
	if code != http.StatusUnauthorized || !strings.Contains(string(body), "expired") {
		t.Fatalf("expired token: %d %s", code, body)
	}
}

func TestTokenOfTenantACannotReadTenantB(t *testing.T) {
	f := newFixture(t)
	admin := f.client(t)
	admin.signIn("admin")
	// The fixture's call is in acme; this token holds globex only.
	svc := f.bearer(t, admin.createToken("globex-bot", auth.Grants{"globex": access.RoleAdmin}))
	if code, body := svc.do("GET", "/api/v1/evidence/"+f.trace, nil); code != http.StatusNotFound {
		t.Errorf("other tenant's evidence: %d %s", code, body)
	}
	code, body := svc.do("POST", "/api/v1/reveal", map[string]string{"trace_id": f.trace, "ref": f.inputRef, "reason": "fishing"})
	if code != http.StatusForbidden || strings.Contains(string(body), "my order") {
		t.Errorf("other tenant's reveal: %d %s", code, body)
	}
	if code, body := svc.do("GET", "/api/v1/access-log?tenant=acme", nil); code != http.StatusForbidden {
		t.Errorf("other tenant's access log: %d %s", code, body)
	}
	if code, body := svc.do("GET", "/api/v1/calls?tenant=acme", nil); code == http.StatusOK && strings.Contains(string(body), f.trace) {
		t.Errorf("other tenant's calls listed: %s", body)
	}
	entries := f.accessEntries(t, "service:globex-bot")
	if len(entries) != 1 || entries[0].Outcome != access.OutcomeDenied || entries[0].Action != "reveal" {
		t.Errorf("the denied reveal is not on record: %+v", entries)
	}
}

func TestTokenGrantsAreBoundByTheCreatorsOwn(t *testing.T) {
	f := newFixture(t)
	users, _, err := auth.OpenUsers(filepath.Join(f.dir, "users.json"))
	if err != nil {
		t.Fatal(err)
	}
	pw, err := users.Add("ada", auth.Grants{"acme": access.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	if err := users.ChangePassword("ada", pw, password); err != nil {
		t.Fatal(err)
	}
	ada := f.client(t)
	ada.signIn("ada")
	for _, g := range []auth.Grants{{"globex": access.RoleViewer}, {access.AllTenants: access.RoleViewer}, {"acme": access.RoleViewer, "globex": access.RoleViewer}} {
		if code, body := ada.do("POST", "/api/v1/tokens", map[string]any{"name": "x", "grants": g, "expires_in_days": 1}); code != http.StatusForbidden {
			t.Errorf("tenant admin granting %v: %d %s", g, code, body)
		}
	}
	ada.createToken("acme-bot", auth.Grants{"acme": access.RoleAuditor})
	// Tokens of tenants ada does not administer are neither listed nor revocable.
	admin := f.client(t)
	admin.signIn("admin")
	other := admin.createToken("globex-bot", auth.Grants{"globex": access.RoleViewer})
	_, body := ada.do("GET", "/api/v1/tokens", nil)
	if strings.Contains(string(body), "globex-bot") || !strings.Contains(string(body), "acme-bot") {
		t.Errorf("tenant admin's token list: %s", body)
	}
	if code, _ := ada.do("POST", "/api/v1/tokens/"+strings.SplitN(other, "_", 3)[1]+"/revoke", nil); code != http.StatusNotFound {
		t.Errorf("tenant admin revoking another tenant's token: %d", code)
	}
	// Without its CSRF token, a cookie session still cannot create one.
	ada.csrf = ""
	if code, _ := ada.do("POST", "/api/v1/tokens", map[string]any{"name": "csrf", "grants": auth.Grants{"acme": "viewer"}, "expires_in_days": 1}); code != http.StatusForbidden {
		t.Errorf("token creation without CSRF: %d", code)
	}
}

func readFileMode(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != mode {
		t.Fatalf("%s has mode %v, want %v", path, info.Mode().Perm(), mode)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestViewerTokenCannotReveal(t *testing.T) {
	f := newFixture(t)
	admin := f.client(t)
	admin.signIn("admin")
	svc := f.bearer(t, admin.createToken("dashboard", auth.Grants{"acme": access.RoleViewer}))
	if code, _ := svc.do("GET", "/api/v1/evidence/"+f.trace, nil); code != http.StatusOK {
		t.Fatalf("viewer token reads metadata: %d", code)
	}
	code, body := svc.do("POST", "/api/v1/reveal", map[string]string{"trace_id": f.trace, "ref": f.inputRef, "reason": "just looking"})
	if code != http.StatusForbidden || strings.Contains(string(body), "my order") {
		t.Fatalf("viewer token reveal: %d %s", code, body)
	}
	found := false
	for _, e := range f.accessEntries(t, "service:dashboard") {
		found = found || e.Action == "reveal" && e.Outcome == access.OutcomeDenied && e.Detail == access.DetailRole
	}
	if !found {
		t.Fatal("the denied reveal of the viewer token is not on record")
	}
	if code, _ := svc.do("POST", "/api/v1/exports", map[string]any{"format": "jsonl", "reason": "r", "from": time.Now().Add(-time.Hour), "to": time.Now()}); code != http.StatusForbidden {
		t.Fatalf("viewer token export: %d", code)
	}
}

func TestTokenCreationAndRevocationAreOnRecord(t *testing.T) {
	f := newFixture(t)
	admin := f.client(t)
	admin.signIn("admin")
	secret := admin.createToken("siem-export", auth.Grants{"acme": access.RoleAuditor})
	id := strings.SplitN(secret, "_", 3)[1]
	if code, body := admin.do("POST", "/api/v1/tokens/"+id+"/revoke", nil); code != http.StatusOK {
		t.Fatalf("revoke: %d %s", code, body)
	}
	var got []string
	for _, e := range f.accessEntries(t, "admin") {
		if strings.Contains(e.Detail, strings.SplitN(secret, "_", 3)[2]) {
			t.Fatalf("the access log holds the token's secret: %+v", e)
		}
		// The package's tests share one ledger: only this token's rows.
		if strings.Contains(e.Detail, id) {
			if !strings.Contains(e.Detail, `"siem-export"`) || !strings.Contains(e.Detail, "auditor") {
				t.Errorf("%s detail does not name the account and role: %q", e.Action, e.Detail)
			}
			got = append(got, e.Action+"/"+e.Tenant+"/"+e.Outcome)
		}
	}
	slices.Sort(got)
	if want := "token_create/acme/allowed,token_revoke/acme/allowed"; strings.Join(got, ",") != want {
		t.Fatalf("token changes on record: %v, want %s", got, want)
	}
}
