package api

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoretest"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/audit"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ui/auth"
)

var store *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }

// fixture is a running API with three accounts and one stored call.
type fixture struct {
	dir       string
	url       string
	exportDir string
	trace     string
	inputRef  string
	input     []byte
	// account is the collector's completeness account the API serves.
	account *completeness.Account
}

const password = "a long enough password"

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, nil, func(h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	})
}

// newFixtureOn is newFixture with the export clock (nil: time.Now), served
// by serve, which returns the base URL.
func newFixtureOn(t *testing.T, clock func() time.Time, serve func(http.Handler) string) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	content := contentstoretest.Open(t, contentstoretest.DirConfig(filepath.Join(dir, "content")))
	users, oneTime, err := auth.OpenUsers(filepath.Join(dir, "users.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := users.ChangePassword("admin", oneTime, password); err != nil {
		t.Fatal(err)
	}
	for name, g := range map[string]auth.Grants{"vera": {"acme": access.RoleViewer}, "aude": {"acme": access.RoleAuditor},
		"gus": {"globex": access.RoleAuditor}} {
		p, err := users.Add(name, g)
		if err != nil {
			t.Fatal(err)
		}
		if err := users.ChangePassword(name, p, password); err != nil {
			t.Fatal(err)
		}
	}
	// The authenticator reads the same file.
	authn, _, err := auth.New(auth.DefaultConfig(filepath.Join(dir, "users.json")))
	if err != nil {
		t.Fatal(err)
	}
	m, err := lifecycle.New(store, content, lifecycle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{dir: dir, account: completeness.NewAccount(), trace: ledgertest.TraceID(t), input: []byte(`[{"role":"user","parts":[{"type":"text","content":"<script>alert(1)</script> my order"}]}]`)}
	put, err := content.Put(ctx, "acme", "input", f.input)
	if err != nil {
		t.Fatal(err)
	}
	f.inputRef = put.Ref.String()
	now := time.Now().UTC().Truncate(time.Millisecond)
	in, cost := int64(12), "0.000125"
	calls := []ledger.Call{
		{Tenant: "acme", TraceID: f.trace, SpanID: "00f067aa0ba902b7", StartTime: now, EndTime: now.Add(800 * time.Millisecond),
			Operation: "chat", ResponseModel: "gpt-4o-mini-2024-07-18", ResponseID: "chatcmpl-" + f.trace, InputTokens: &in,
			CostUSD: &cost, CostStatus: "ok", InputRef: f.inputRef, ContentStatus: "stored"},
		{Tenant: "acme", TraceID: f.trace, SpanID: "00f067aa0ba902b8", StartTime: now.Add(time.Second), EndTime: now.Add(2 * time.Second),
			Operation: "chat", ResponseModel: "mystery-model", CostStatus: "unknown_model", ContentStatus: "not_captured"},
	}
	q := "SELECT * FROM orders WHERE id = ?"
	span := ledgertest.Evidence("acme", f.trace, "00f067aa0ba902b9", conventions.CategoryDB)
	span.StartTime, span.EndTime, span.DBQueryText, span.DBQueryStatus = now.Add(-time.Second), now, &q, ledger.QuerySanitized
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	if err := store.InsertEvidence(ctx, []ledger.EvidenceSpan{span}); err != nil {
		t.Fatal(err)
	}
	h := Handler(Deps{Ledger: store, Content: content, Lifecycle: m, Auth: authn, ExportDir: filepath.Join(dir, "exports"),
		Logger: slog.New(slog.DiscardHandler), Now: clock, Account: f.account})
	f.url, f.exportDir = serve(h), filepath.Join(dir, "exports")
	return f
}

// client is a browser-like client: a cookie jar, and the CSRF token of
// its session.
type client struct {
	t    *testing.T
	f    *fixture
	http *http.Client
	csrf string
	// token, if set, is sent as Authorization: Bearer.
	token string
}

func (f *fixture) client(t *testing.T) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, f: f, http: &http.Client{Jar: jar}}
}

func (c *client) do(method, path string, body any, hdr ...string) (int, []byte) {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.f.url+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.csrf != "" {
		req.Header.Set(auth.CSRFHeader, c.csrf)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// signIn signs user in with the fixture's password.
func (c *client) signIn(user string) { c.signInWith(user, password) }

// signInWith signs in and keeps the session's CSRF token. The test server
// is plain HTTP on loopback, where a cookie jar (unlike a browser) does
// not send Secure cookies, so the jar gets a copy without the flag.
func (c *client) signInWith(user, pw string) auth.Session {
	c.t.Helper()
	body, _ := json.Marshal(map[string]string{"user": user, "password": pw})
	resp, err := c.http.Post(c.f.url+"/api/v1/session", "application/json", bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("sign in %s: %s", user, resp.Status)
	}
	var s auth.Session
	_ = json.NewDecoder(resp.Body).Decode(&s)
	c.csrf = s.CSRFToken
	u, _ := http.NewRequest("GET", c.f.url, nil)
	for _, ck := range resp.Cookies() {
		ck.Secure = false
		c.http.Jar.SetCookies(u.URL, []*http.Cookie{ck})
	}
	return s
}

func decodeJSON[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

func TestNothingWithoutSignIn(t *testing.T) {
	f := newFixture(t)
	c := f.client(t)
	for _, p := range []string{"/api/v1/evidence/" + f.trace, "/api/v1/calls", "/api/v1/holds", "/api/v1/access-log", "/api/v1/session"} {
		if code, _ := c.do("GET", p, nil); code != http.StatusUnauthorized {
			t.Errorf("GET %s without a session: %d, want 401", p, code)
		}
	}
	if code, _ := c.do("POST", "/api/v1/session", map[string]string{"user": "admin", "password": "wrong password!"}); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d", code)
	}
	resp, err := http.Get(f.url + "/complaints/" + f.trace)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != http.StatusOK || !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("page: %s, CSP %q", resp.Status, csp)
	}
}

func TestOneTimePasswordMustBeChanged(t *testing.T) {
	dir := t.TempDir()
	authn, oneTime, err := auth.New(auth.DefaultConfig(filepath.Join(dir, "users.json")))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(Deps{Ledger: store, Auth: authn, Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	c := (&fixture{url: srv.URL}).client(t)
	if s := c.signInWith("admin", oneTime); !s.MustChangePassword {
		t.Fatalf("the one-time password's session does not require a change: %+v", s)
	}
	if code, body := c.do("GET", "/api/v1/calls", nil); code != http.StatusForbidden || !strings.Contains(string(body), "password change required") {
		t.Fatalf("before the change: %d %s", code, body)
	}
	if code, _ := c.do("POST", "/api/v1/session/password", map[string]string{"current": oneTime, "new": "short"}); code != http.StatusBadRequest {
		t.Fatalf("weak new password: %d", code)
	}
	if code, body := c.do("POST", "/api/v1/session/password", map[string]string{"current": oneTime, "new": password}); code != http.StatusNoContent {
		t.Fatalf("change: %d %s", code, body)
	}
	if code, body := c.do("GET", "/api/v1/calls", nil); code != http.StatusOK {
		t.Fatalf("after the change: %d %s", code, body)
	}
}

func TestEvidenceAndTenantIsolation(t *testing.T) {
	f := newFixture(t)
	vera := f.client(t)
	vera.signIn("vera")
	code, body := vera.do("GET", "/api/v1/evidence/"+f.trace, nil)
	if code != http.StatusOK {
		t.Fatalf("evidence: %d %s", code, body)
	}
	ev := decodeJSON[Evidence](t, body)
	if len(ev.Calls) != 2 || len(ev.EvidenceSpans) != 1 || len(ev.Timeline) != 3 || ev.CanReveal {
		t.Fatalf("evidence: %d calls, %d spans, %d timeline, can_reveal %v", len(ev.Calls), len(ev.EvidenceSpans), len(ev.Timeline), ev.CanReveal)
	}
	if ev.Totals.CostUSD == nil || *ev.Totals.CostUSD != "0.000125" || ev.Totals.CostUnknownCalls != 1 || !strings.HasSuffix(ev.Totals.Display, "+?") {
		t.Fatalf("totals: %+v", ev.Totals)
	}
	first := ev.Calls[0]
	if len(first.Content) != 2 || first.Content[0].Field != "input" || !first.Content[0].Available || first.Content[0].Ref != f.inputRef {
		t.Fatalf("content of the first call: %+v", first.Content)
	}
	if out := first.Content[1]; out.Available || out.WhyNot == "" {
		t.Fatalf("output without a ref: %+v", out)
	}
	if second := ev.Calls[1].Content[0]; second.Available || !strings.Contains(second.WhyNot, "not captured") {
		t.Fatalf("not captured input: %+v", second)
	}
	if strings.Contains(string(body), "my order") {
		t.Fatal("the evidence page carries content")
	}
	gus := f.client(t)
	gus.signIn("gus")
	if code, _ := gus.do("GET", "/api/v1/evidence/"+f.trace, nil); code != http.StatusNotFound {
		t.Fatalf("another tenant's trace: %d, want 404", code)
	}
	if code, _ := gus.do("GET", "/api/v1/evidence/"+ledgertest.TraceID(t), nil); code != http.StatusNotFound {
		t.Fatalf("unknown trace: %d, want 404", code)
	}
	log, err := store.AccessLog(context.Background(), ledgerstore.AccessFilter{Tenant: "acme", Actor: "vera", Action: access.ActionView})
	if err != nil || len(log) != 1 || log[0].TraceID != f.trace {
		t.Fatalf("view not on record: %+v %v", log, err)
	}
}

func TestRevealNeedsRoleReasonAndCSRF(t *testing.T) {
	f := newFixture(t)
	req := map[string]string{"trace_id": f.trace, "ref": f.inputRef, "reason": "ticket 4711"}
	vera := f.client(t)
	vera.signIn("vera")
	if code, body := vera.do("POST", "/api/v1/reveal", req); code != http.StatusForbidden || strings.Contains(string(body), "my order") {
		t.Fatalf("viewer reveal: %d %s", code, body)
	}
	aude := f.client(t)
	aude.signIn("aude")
	csrf := aude.csrf
	aude.csrf = ""
	if code, _ := aude.do("POST", "/api/v1/reveal", req); code != http.StatusForbidden {
		t.Fatalf("reveal without CSRF token: %d", code)
	}
	aude.csrf = csrf
	if code, _ := aude.do("POST", "/api/v1/reveal", req, "Sec-Fetch-Site", "cross-site"); code != http.StatusForbidden {
		t.Fatalf("cross-site reveal: %d", code)
	}
	if code, _ := aude.do("POST", "/api/v1/reveal", map[string]string{"trace_id": f.trace, "ref": f.inputRef}); code != http.StatusForbidden {
		t.Fatalf("reveal without reason: %d", code)
	}
	code, body := aude.do("POST", "/api/v1/reveal", req)
	if code != http.StatusOK {
		t.Fatalf("auditor reveal: %d %s", code, body)
	}
	got := decodeJSON[map[string]string](t, body)
	if got["content"] != string(contentstore.Canonicalize(f.input)) {
		t.Fatalf("revealed %q", got["content"])
	}
	log, err := store.AccessLog(context.Background(), ledgerstore.AccessFilter{Tenant: "acme", Action: "reveal"})
	if err != nil {
		t.Fatal(err)
	}
	var allowed, denied int
	for _, e := range log {
		switch {
		case e.Outcome == access.OutcomeAllowed && e.Actor == "aude" && e.Reason == "ticket 4711" && e.Ref == f.inputRef:
			allowed++
		case e.Outcome == access.OutcomeDenied:
			denied++
		}
	}
	// The viewer's and the reasonless attempt; the CSRF failures never
	// reached the read path.
	if allowed != 1 || denied != 2 {
		t.Fatalf("access log: %d allowed, %d denied: %+v", allowed, denied, log)
	}
}

func TestExportDownloadVerifies(t *testing.T) {
	f := newFixture(t)
	aude := f.client(t)
	aude.signIn("aude")
	from := time.Now().Add(-time.Hour).UTC()
	code, body := aude.do("POST", "/api/v1/exports", map[string]any{"tenant": "acme", "from": from, "to": time.Now().Add(time.Hour).UTC(),
		"format": "jsonl", "reason": "quarterly audit"})
	if code != http.StatusCreated {
		t.Fatalf("export: %d %s", code, body)
	}
	res := decodeJSON[struct {
		Download string         `json:"download"`
		Manifest audit.Manifest `json:"manifest"`
	}](t, body)
	code, zipped := aude.do("GET", res.Download, nil)
	if code != http.StatusOK {
		t.Fatalf("download: %d", code)
	}
	dir := t.TempDir()
	zr, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	for _, zf := range zr.File {
		rc, _ := zf.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if err := os.WriteFile(filepath.Join(dir, zf.Name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	rep, err := audit.Verify(context.Background(), dir, audit.VerifyOptions{})
	if err != nil || rep.Manifest.Root != res.Manifest.Root {
		t.Fatalf("verify: %v (root %s vs %s)", err, rep.Manifest.Root, res.Manifest.Root)
	}
	vera := f.client(t)
	vera.signIn("vera")
	if code, _ := vera.do("GET", res.Download, nil); code != http.StatusForbidden {
		t.Fatalf("a viewer downloads an export: %d", code)
	}
	gus := f.client(t)
	gus.signIn("gus")
	if code, _ := gus.do("GET", res.Download, nil); code != http.StatusNotFound {
		t.Fatalf("another auditor downloads aude's export: %d", code)
	}
	if code, _ := gus.do("POST", "/api/v1/exports", map[string]any{"tenant": "acme", "from": from, "to": time.Now().UTC(),
		"format": "csv", "reason": "curious"}); code != http.StatusForbidden {
		t.Fatalf("export of a tenant not granted: %d", code)
	}
}

func TestAdminPages(t *testing.T) {
	f := newFixture(t)
	aude := f.client(t)
	aude.signIn("aude")
	for _, p := range []string{"/api/v1/holds", "/api/v1/lifecycle"} {
		if code, _ := aude.do("GET", p, nil); code != http.StatusForbidden {
			t.Fatalf("auditor reads %s: %d", p, code)
		}
	}
	admin := f.client(t)
	admin.signIn("admin")
	code, body := admin.do("POST", "/api/v1/holds", map[string]any{"scope": map[string]string{"tenant": "acme", "trace_id": f.trace}, "reason": "litigation 12"})
	if code != http.StatusCreated {
		t.Fatalf("create hold: %d %s", code, body)
	}
	created := decodeJSON[struct {
		Hold lifecycle.Hold `json:"hold"`
	}](t, body)
	code, body = admin.do("GET", "/api/v1/holds?tenant=acme", nil)
	list := decodeJSON[struct {
		Holds []lifecycle.Hold `json:"holds"`
	}](t, body)
	if code != http.StatusOK || len(list.Holds) != 1 || list.Holds[0].ID != created.Hold.ID {
		t.Fatalf("holds: %d %s", code, body)
	}
	code, body = admin.do("GET", "/api/v1/evidence/"+f.trace, nil)
	ev := decodeJSON[Evidence](t, body)
	if code != http.StatusOK || ev.Calls[0].State == nil || len(ev.Calls[0].State.HoldIDs) != 1 {
		t.Fatalf("evidence shows no hold: %d %s", code, body)
	}
	if code, body := admin.do("POST", "/api/v1/holds/"+created.Hold.ID+"/release", map[string]string{"reason": "settled"}); code != http.StatusOK {
		t.Fatalf("release: %d %s", code, body)
	}
	code, body = admin.do("GET", "/api/v1/access-log?actor=admin&action=hold_create", nil)
	entries := decodeJSON[struct {
		Entries []ledgerstore.AccessEntry `json:"entries"`
	}](t, body)
	if code != http.StatusOK || len(entries.Entries) == 0 {
		t.Fatalf("access log filtered by actor and action: %d %s", code, body)
	}
	for _, e := range entries.Entries {
		if e.Actor != "admin" || e.Action != "hold_create" {
			t.Fatalf("filter let through %+v", e)
		}
	}
	// The page's action filter offers what the API lists: every action
	// the log holds by now.
	code, body = admin.do("GET", "/api/v1/access-log", nil)
	all := decodeJSON[struct {
		Entries []ledgerstore.AccessEntry `json:"entries"`
		Actions []string                  `json:"actions"`
	}](t, body)
	if code != http.StatusOK || len(all.Entries) == 0 {
		t.Fatalf("access log: %d %s", code, body)
	}
	for _, e := range all.Entries {
		if !slices.Contains(all.Actions, e.Action) {
			t.Errorf("the log holds action %q, the API lists only %v", e.Action, all.Actions)
		}
	}
	// No runner in this process: the page says so, and lists runs.
	code, body = admin.do("GET", "/api/v1/lifecycle", nil)
	lc := decodeJSON[struct {
		Runner     *lifecycle.RunnerStatus `json:"runner"`
		ExpiryRuns []lifecycle.ExpiryRun   `json:"expiry_runs"`
	}](t, body)
	if code != http.StatusOK || lc.Runner != nil || lc.ExpiryRuns == nil {
		t.Fatalf("lifecycle: %d %s", code, body)
	}
}

// TestMalformedRevealIsRecorded: a reveal whose ref is not a reference at
// all is refused and recorded, like every other attempt.
func TestMalformedRevealIsRecorded(t *testing.T) {
	f := newFixture(t)
	aude := f.client(t)
	aude.signIn("aude")
	for _, ref := range []string{"garbage", "docket-content://acme/../../x", ""} {
		if code, body := aude.do("POST", "/api/v1/reveal", map[string]string{"trace_id": f.trace, "ref": ref, "reason": "probe:" + ref}); code < 400 || code >= 500 {
			t.Fatalf("reveal of %q: %d %s", ref, code, body)
		}
	}
	log, err := store.AccessLog(context.Background(), ledgerstore.AccessFilter{Actor: "aude", Action: "reveal"})
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]bool{}
	for _, e := range log {
		if e.Outcome == access.OutcomeDenied && e.TraceID == f.trace {
			recorded[e.Reason] = true
		}
	}
	for _, ref := range []string{"garbage", "docket-content://acme/../../x", ""} {
		if !recorded["probe:"+ref] {
			t.Errorf("the reveal of malformed ref %q is not in the access log", ref)
		}
	}
}
