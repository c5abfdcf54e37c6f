// Package e2e_test drives the evidence UI in Debian's headless Chromium
// against the real stack: docket with its ledger, content store and UI,
// fed over OTLP by the example LLM application.
package e2e_test

import (
	"archive/zip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ui/apiclient"
)

// chromiumPath is Debian's Chromium, installed by `make test`.
const chromiumPath = "/usr/bin/chromium"

type page struct {
	t   *testing.T
	ctx context.Context
	url string
}

func newPage(t *testing.T, base, downloads string) *page {
	t.Helper()
	shorttest.Needs(t, shorttest.Chromium)
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("Chromium is not installed (%v); `make test` installs it with scripts/install-chromium.sh", err)
	}
	// The flags keep Chromium off the network except for the page under
	// test: this machine's network is closed, and the hostile-content
	// check counts every request that leaves.
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true), chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1440, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatal(err)
	}
	return &page{t: t, ctx: ctx, url: base}
}

func tid(id string) chromedp.CSS { return chromedp.CSS(`[data-testid="` + id + `"]`) }

// within bounds one step; a UI that never shows what it should fails the
// test instead of hanging it.
func (p *page) within(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(p.ctx, d)
}

func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	p.doFor(what, 30*time.Second, actions...)
}

// doFor is do with a deadline for steps whose server side writes to the
// ledger, which a loaded machine can hold up well past a page's 30 s.
func (p *page) doFor(what string, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := p.within(d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v\npage text: %s", what, err, p.bodyText())
	}
}

// click clicks sel once no part of the page is still loading (ui.js marks
// a loading part aria-busy). A click lands where sel was a moment before;
// a part that finishes loading above it in between moves it, and the click
// hits something else.
func click[S chromedp.Selectable](sel S) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.WaitNotPresent(chromedp.CSS(`[aria-busy="true"]`)), chromedp.Click(sel))
}

func (p *page) bodyText() string {
	ctx, cancel := p.within(5 * time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
	return s
}

func (p *page) visit(path string) {
	p.t.Helper()
	p.do("visit "+path, chromedp.Navigate(p.url+path))
}

func (p *page) text(sel chromedp.CSS) string {
	p.t.Helper()
	p.do("wait for "+string(sel), chromedp.WaitVisible(sel))
	ctx, cancel := p.within(10 * time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(sel))
	if err != nil {
		p.t.Fatalf("text of %s: %v", sel, err)
	}
	return strings.TrimSpace(s)
}

func eval[T any](p *page, js string) T {
	p.t.Helper()
	ctx, cancel := p.within(10 * time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

func (p *page) path() string { return eval[string](p, `location.pathname`) }

func (p *page) signIn(user, password string) {
	p.t.Helper()
	p.do("sign in as "+user, chromedp.WaitVisible(tid("login-form")),
		chromedp.SendKeys(tid("login-user"), user), chromedp.SendKeys(tid("login-password"), password),
		click(tid("login-submit")), chromedp.WaitNotPresent(tid("login-form")))
}

// changeOneTimePassword completes the forced change after a first sign-in.
func (p *page) changeOneTimePassword(current, next string) {
	p.t.Helper()
	p.do("forced password change", chromedp.WaitVisible(tid("password-required")),
		chromedp.SendKeys(tid("password-current"), current), chromedp.SendKeys(tid("password-new"), next),
		chromedp.SendKeys(tid("password-confirm"), next), click(tid("password-submit")))
	p.waitGone(tid("password-form"))
}

func (p *page) waitGone(sel chromedp.CSS) {
	p.t.Helper()
	p.do("wait until "+string(sel)+" is gone", chromedp.WaitNotPresent(sel))
}

func (p *page) signOut() {
	p.t.Helper()
	p.do("sign out", click(tid("sign-out")), chromedp.WaitVisible(tid("login-form")))
}

// shot saves a screenshot for the README when DOCKET_SCREENSHOTS names a
// directory.
func (p *page) shot(name string) {
	dir := os.Getenv("DOCKET_SCREENSHOTS")
	if dir == "" {
		return
	}
	ctx, cancel := p.within(30 * time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

func TestEvidenceUIInChromium(t *testing.T) {
	s := startStack(t)
	var beaconHits atomic.Int64
	beacon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		beaconHits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer beacon.Close()
	hostile := fmt.Sprintf(`<script>document.title="pwned"</script><img src="%s/beacon.png"> [click](%s/phish) where is my refund?`, beacon.URL, beacon.URL)
	plain := s.ask("user0001@example.com", "How do I reset my password? The reset link expired.")
	attack := s.ask("user0002@example.com", hostile)
	for i := 0; i < 8; i++ {
		s.ask(fmt.Sprintf("user%04d@example.com", 3+i), fmt.Sprintf("Question %d about my invoice", i))
	}
	s.flush()
	veraPW, audePW := s.addUser("vera", "default=viewer"), s.addUser("aude", "default=auditor")
	const adminPW, veraNew, audeNew = "admin passphrase for the e2e test", "vera passphrase for the e2e test", "aude passphrase for the e2e test"
	downloads := t.TempDir()
	p := newPage(t, s.uiURL, downloads)

	// Nothing without signing in: the permalink leads to the sign-in page
	// and back after it. The first sign-in with the printed one-time
	// password must change it.
	p.visit("/complaints/" + plain)
	p.do("redirect to sign-in", chromedp.WaitVisible(tid("login-form")))
	if got := p.path(); got != "/login" {
		t.Fatalf("unauthenticated permalink went to %s", got)
	}
	p.signIn("admin", s.admin)
	p.changeOneTimePassword(s.admin, adminPW)
	admin, err := apiclient.SignIn(context.Background(), s.uiURL, "admin", adminPW)
	if err != nil {
		t.Fatal(err)
	}
	s.waitEvidence(admin, plain)
	s.waitEvidence(admin, attack)
	// A tool call's arguments on a span of their own: the content processor
	// stores them, and the page reveals them as it reveals a call's.
	const toolCanary = "tool canary IBAN DE02 1203 0000 0000 2020 51"
	s.sendToolSpan(plain, `{"iban":"`+toolCanary+`"}`)
	s.waitSpanContent(admin, plain)
	var ev struct {
		Calls         []ledger.Call         `json:"calls"`
		EvidenceSpans []ledger.EvidenceSpan `json:"evidence_spans"`
	}
	if err := admin.Get(context.Background(), "/api/v1/evidence/"+plain, &ev); err != nil {
		t.Fatal(err)
	}

	// An attacker re-sends the call's span key with another model: the
	// page keeps the call as recorded and tells of the rewrite attempt.
	call := ev.Calls[0]
	s.sendForgedCall(call)
	s.waitConflicts(admin, plain, 1)

	// All evidence fields of the demo request, as the API has them.
	p.visit("/complaints/" + plain)
	if got := p.text(tid("conflicts")); !strings.Contains(got, "intruder") || !strings.Contains(got, "first recorded") {
		t.Errorf("rewrite notice: %q", got)
	}
	for field, want := range map[string]string{"response_model": call.ResponseModel, "response_id": call.ResponseID,
		"request_model": call.RequestModel, "service_name": call.ServiceName, "operation": call.Operation} {
		if got := p.text(chromedp.CSS(`[data-testid="call"] [data-field="` + field + `"]`)); got != want {
			t.Errorf("%s shown as %q, ledger has %q", field, got, want)
		}
	}
	for _, field := range []string{"duration_ms", "ttft_ms", "finish_reasons", "input_tokens", "output_tokens", "cost_usd",
		"temperature", "max_tokens", "retry_attempt", "error_class", "end_user_ref", "usage_source"} {
		if got := p.text(chromedp.CSS(`[data-testid="call"] [data-field="` + field + `"]`)); got == "" {
			t.Errorf("%s is empty on the page", field)
		}
	}
	var docs, queries int
	for _, sp := range ev.EvidenceSpans {
		docs += len(sp.Documents)
		if sp.Category == "db" {
			queries++
		}
	}
	if docs == 0 || queries == 0 {
		t.Fatalf("the demo trace has %d documents and %d DB queries in the ledger", docs, queries)
	}
	if n := eval[int](p, `document.querySelectorAll('[data-testid="document"]').length`); n != docs {
		t.Errorf("%d documents shown, ledger has %d", n, docs)
	}
	dbText := p.text(tid("db-query-text"))
	if !strings.Contains(dbText, "?") || strings.Contains(dbText, "user0001@example.com") {
		t.Errorf("DB query shown as %q: want the sanitized text", dbText)
	}
	// Spans of the trace may still be arriving (a request span is kept
	// once its trace's call is seen), so the page is compared with the API
	// as it answers now, loading both again until the trace settles.
	for attempt := 1; ; attempt++ {
		var now struct {
			Timeline []json.RawMessage `json:"timeline"`
		}
		if err := admin.Get(context.Background(), "/api/v1/evidence/"+plain, &now); err != nil {
			t.Fatal(err)
		}
		n := eval[int](p, `document.querySelectorAll('[data-testid="timeline-row"]').length`)
		if n == len(now.Timeline) {
			break
		}
		if attempt == 10 {
			t.Errorf("timeline shows %d spans, the API has %d", n, len(now.Timeline))
			break
		}
		time.Sleep(500 * time.Millisecond)
		p.visit("/complaints/" + plain)
		p.text(tid("conflicts"))
	}
	p.shot("complaint")
	p.signOut()

	// A viewer sees the evidence but cannot reveal content.
	p.signIn("vera", veraPW)
	p.changeOneTimePassword(veraPW, veraNew)
	p.visit("/complaints/" + attack)
	if got := p.text(tid("reveal-denied")); !strings.Contains(got, "viewer") {
		t.Errorf("viewer's reveal notice: %q", got)
	}
	if n := eval[int](p, `document.querySelectorAll('[data-testid="reveal-button"]').length`); n != 0 {
		t.Errorf("viewer has %d reveal buttons", n)
	}
	vera, err := apiclient.SignIn(context.Background(), s.uiURL, "vera", veraNew)
	if err != nil {
		t.Fatal(err)
	}
	var attackEv struct {
		Calls []ledger.Call `json:"calls"`
	}
	if err := vera.Get(context.Background(), "/api/v1/evidence/"+attack, &attackEv); err != nil {
		t.Fatal(err)
	}
	err = vera.Post(context.Background(), "/api/v1/reveal", map[string]string{"trace_id": attack, "ref": attackEv.Calls[0].InputRef, "reason": "curious"}, nil)
	if err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("viewer reveal through the API: %v, want 403", err)
	}
	p.signOut()

	// An auditor reveals the hostile input with a reason: it is text, runs
	// nothing and loads nothing.
	p.signIn("aude", audePW)
	p.changeOneTimePassword(audePW, audeNew)
	p.visit("/complaints/" + attack)
	p.do("reveal the input",
		click(chromedp.CSS(`[data-content-field="input"] [data-testid="reveal-button"]`)),
		chromedp.SendKeys(tid("reveal-reason"), "ticket 4711: customer disputes the answer"),
		click(tid("reveal-submit")))
	shown := p.text(tid("reveal-content"))
	if !strings.Contains(shown, `<script>document.title=\"pwned\"</script>`) && !strings.Contains(shown, `<script>document.title="pwned"</script>`) {
		t.Errorf("revealed content does not show the markup as text: %q", shown)
	}
	if !strings.Contains(shown, beacon.URL+"/beacon.png") {
		t.Errorf("revealed content lost the image markup: %q", shown)
	}
	if title := eval[string](p, `document.title`); title == "pwned" {
		t.Fatal("the stored <script> ran")
	}
	if n := eval[int](p, `document.querySelectorAll('[data-testid="reveal-content"] *').length`); n != 0 {
		t.Errorf("revealed content became %d elements", n)
	}
	if n := eval[int](p, fmt.Sprintf(`[...document.images].filter(i => i.src.startsWith(%q)).length + [...document.links].filter(a => a.href.startsWith(%q)).length`, beacon.URL, beacon.URL)); n != 0 {
		t.Errorf("%d images or links point at the content's URLs", n)
	}
	p.shot("reveal")

	p.visit("/complaints/" + plain)
	// The trace's other spans hold more content (the retrieval's query);
	// the tool call's arguments are the item of kind tool.call.arguments.
	const toolItem = `[data-testid="span-content"] [data-content-field$="tool.call.arguments"] `
	p.do("reveal the tool call's arguments",
		click(chromedp.CSS(toolItem+`[data-testid="reveal-button"]`)),
		chromedp.SendKeys(chromedp.CSS(toolItem+`[data-testid="reveal-reason"]`), "ticket 4712: which account did the tool look up"),
		click(chromedp.CSS(toolItem+`[data-testid="reveal-submit"]`)))
	if got := p.text(chromedp.CSS(toolItem + `[data-testid="reveal-content"]`)); !strings.Contains(got, toolCanary) {
		t.Errorf("revealed tool arguments: %q", got)
	}

	// The auditor exports the ledger; the bundle verifies, and one
	// tampered row makes verification fail.
	p.visit("/export")
	p.do("export", chromedp.WaitVisible(tid("export-form")),
		chromedp.SetValue(tid("export-tenant"), "default"),
		chromedp.SetValue(tid("export-format"), "jsonl"),
		chromedp.SendKeys(tid("export-reason"), "quarterly audit of the support bot"),
		click(tid("export-submit")),
		chromedp.WaitVisible(tid("export-download")))
	p.shot("export")
	p.do("download", click(tid("export-download")))
	bundle := unzipDownload(t, downloads)
	verify := func() error {
		out, err := exec.Command(s.bin, "export", "verify", bundle).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, out)
		}
		return nil
	}
	if err := verify(); err != nil {
		t.Fatalf("docket export verify on the downloaded bundle: %v", err)
	}
	tamper(t, filepath.Join(bundle, "calls.jsonl"))
	if err := verify(); err == nil {
		t.Fatal("docket export verify passed after one row was altered")
	}
	p.signOut()

	// The admin finds the reveal, with its reason, in the access log.
	p.signIn("admin", adminPW)
	p.visit("/admin/access-log?actor=aude&action=reveal")
	p.text(tid("access-row"))
	rows := strings.Split(eval[string](p, `[...document.querySelectorAll('[data-testid="access-row"]')].map((r) => r.innerText).join('\n')`), "\n")
	for _, ticket := range []string{"ticket 4711", "ticket 4712"} {
		if !slices.ContainsFunc(rows, func(r string) bool { return strings.Contains(r, ticket) && strings.Contains(r, "allowed") }) {
			t.Errorf("no allowed reveal for %s in the access log: %q", ticket, rows)
		}
	}
	// The action filter suggests the actions the API lists.
	if got := strings.Fields(eval[string](p, `[...document.querySelectorAll('#access-actions option')].map((o) => o.value).join(' ')`)); !slices.Contains(got, access.ActionReveal) || !slices.Contains(got, access.ActionTokenRevoke) {
		t.Errorf("access-log action suggestions: %q", got)
	}
	p.shot("access-log")

	// The admin puts the complaint on legal hold from the holds page; the
	// list filtered to the tenant shows it, and the deletions page loads.
	p.visit("/admin/holds?tenant=default")
	p.do("place a hold", chromedp.WaitVisible(tid("hold-form")),
		chromedp.SendKeys(tid("hold-tenant"), "default"), chromedp.SendKeys(tid("hold-trace_id"), plain),
		chromedp.SendKeys(tid("hold-reason"), "litigation LIT-7"), click(tid("hold-submit")),
		chromedp.WaitVisible(tid("hold-row")))
	if row := p.text(tid("hold-row")); !strings.Contains(row, "litigation LIT-7") || !strings.Contains(row, "active") {
		t.Errorf("hold row: %q", row)
	}
	p.visit("/admin/deletions?status=pending")
	p.do("deletions page", chromedp.WaitVisible(tid("deletions-filter-status")), chromedp.WaitVisible(tid("deletions-empty")))
	// Retention has been running in the background (every 3 s here).
	p.do("retention runs", chromedp.WaitVisible(tid("lifecycle-runner")), chromedp.WaitVisible(tid("expiry-run-row")))
	if !eval[bool](p, `[...document.querySelectorAll('[data-testid="expiry-run-row"]')].some((r) => r.innerText.includes('system:lifecycle') && r.innerText.includes('done'))`) {
		t.Errorf("no finished background retention run listed: %s", p.text(tid("lifecycle")))
	}
	p.visit("/ledger")
	p.do("ledger rows", chromedp.WaitVisible(tid("ledger-row")), chromedp.WaitVisible(tid("chart-timeseries")))
	p.shot("ledger")
	p.visit("/costs")
	p.do("cost table", chromedp.WaitVisible(tid("cost-total")))
	p.shot("costs")
	p.visit("/")
	p.do("lookup page", chromedp.WaitVisible(tid("search-input")))
	p.shot("lookup")

	// A distribution replay of the plain complaint, run while docket is
	// stopped (the embedded ledger allows one process), shows on its page:
	// the fake provider ends every 4th answer to an input differently, so
	// 6 of 8 replays match the original and the other two differ from it
	// and from each other.
	provider := proctest.Build(t, "github.com/docketlabs/docket/examples/fakeprovider")
	providerPort := proctest.FreePort(t)
	fake := exec.Command(provider, "-listen", "127.0.0.1:"+providerPort, "-vary-every", "4")
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	defer stop(fake)
	waitHTTP(t, "http://127.0.0.1:"+providerPort)
	s.restartDocket(func() {
		cmd := exec.Command(s.bin, "replay", "--trace", plain, "--purpose", "complaint 4711: is the answer reproducible?",
			"--n", "8", "--concurrency", "1", "--data", s.data, "--actor", "aude")
		cmd.Env = append(os.Environ(), "OPENAI_BASE_URL=http://127.0.0.1:"+providerPort+"/v1", "OPENAI_API_KEY=test")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("docket replay: %v\n%s", err, out)
		}
	})
	p.visit("/complaints/" + plain)
	p.do("signed out by the restart", chromedp.WaitVisible(tid("login-form")))
	p.signIn("admin", adminPW)
	if got := p.text(chromedp.CSS(`[data-testid="replay"] [data-field="exact_matches"]`)); got != "75.0% (6/8)" {
		t.Errorf("replay exact matches shown as %q, want 75.0%% (6/8)", got)
	}
	if n := eval[int](p, `document.querySelectorAll('[data-testid="replay-variants"] tbody tr').length`); n != 3 {
		t.Errorf("replay shows %d distinct outputs, want 3", n)
	}
	p.shot("complaint-replayed")

	time.Sleep(time.Second) // any late image load would have happened by now
	if n := beaconHits.Load(); n != 0 {
		t.Fatalf("the hostile content made the browser send %d requests", n)
	}
}

// unzipDownload waits for the browser's download and unpacks it.
func unzipDownload(t *testing.T, dir string) string {
	t.Helper()
	var zipPath string
	deadline := time.Now().Add(30 * time.Second)
	for zipPath == "" && time.Now().Before(deadline) {
		matches, _ := filepath.Glob(filepath.Join(dir, "*.zip"))
		if len(matches) == 1 {
			zipPath = matches[0]
		}
		time.Sleep(200 * time.Millisecond)
	}
	if zipPath == "" {
		t.Fatal("no export was downloaded")
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := filepath.Join(t.TempDir(), "bundle")
	if err := os.Mkdir(out, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if strings.ContainsAny(f.Name, `/\`) {
			t.Fatalf("zip entry %q has a path", f.Name)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(out, f.Name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// tamper changes one digit of the first row's token count, keeping the
// line valid JSON, and leaves the manifest as it was.
func tamper(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	line, rest, _ := strings.Cut(string(b), "\n")
	i := strings.Index(line, `"input_tokens":`)
	if i < 0 {
		t.Fatalf("first row has no input_tokens: %s", line)
	}
	j := i + len(`"input_tokens":`)
	d := line[j]
	if d < '0' || d > '9' {
		t.Fatalf("first row's input_tokens is not a number: %s", line[i:])
	}
	line = line[:j] + string('0'+(d-'0'+1)%10) + line[j+1:]
	if err := os.WriteFile(path, []byte(line+"\n"+rest), 0o600); err != nil {
		t.Fatal(err)
	}
}
