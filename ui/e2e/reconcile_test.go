package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/grpc/codes"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/otlptest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ui/apiclient"
)

// TestReconciliationPageInChromium: calls of the example app reach the
// ledger; an admin imports a provider usage export that counts one call
// more through the page's form, and the page shows the cell as missing
// calls with the drift the numbers give.
func TestReconciliationPageInChromium(t *testing.T) {
	s := startStack(t)
	var traces []string
	for i := 0; i < 5; i++ {
		traces = append(traces, s.ask(fmt.Sprintf("user%04d@example.com", i), fmt.Sprintf("Where is order %d?", i)))
	}
	s.flush()
	// A body that is not OTLP, from a sender no credentials name.
	if code, err := otlptest.SendRawTraces(s.otlp, "", []byte{0xff, 0xff, 0xff}); err != nil || code != codes.Internal {
		t.Fatalf("malformed export: %s %v", code, err)
	}
	p := newPage(t, s.uiURL, t.TempDir())
	const adminPW = "admin passphrase for the reconcile test"
	p.visit("/reconcile")
	p.signIn("admin", s.admin)
	p.changeOneTimePassword(s.admin, adminPW)
	admin, err := apiclient.SignIn(context.Background(), s.uiURL, "admin", adminPW)
	if err != nil {
		t.Fatal(err)
	}
	var calls []ledger.Call
	for _, tr := range traces {
		s.waitEvidence(admin, tr)
		var ev struct {
			Calls []ledger.Call `json:"calls"`
		}
		if err := admin.Get(context.Background(), "/api/v1/evidence/"+tr, &ev); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, ev.Calls...)
	}
	c := calls[0]
	day := c.StartTime.UTC().Format(time.DateOnly)
	var in, out int64
	for _, call := range calls {
		if call.ResponseModel != c.ResponseModel || call.StartTime.UTC().Format(time.DateOnly) != day || call.InputTokens == nil || call.OutputTokens == nil {
			t.Skipf("the example app's calls span models or days, or lack usage; this test needs one cell: %+v", call)
		}
		in += *call.InputTokens
		out += *call.OutputTokens
	}
	if c.Provider != "openai" {
		t.Fatalf("the example app's provider is %q; this test writes an OpenAI export", c.Provider)
	}
	// The provider counts one request more than the ledger has.
	csv := filepath.Join(t.TempDir(), "openai-usage.csv")
	body := fmt.Sprintf("date,model,num_model_requests,input_tokens,output_tokens,input_cached_tokens\n%s,%s,%d,%d,%d,0\n",
		day, c.ResponseModel, len(calls)+1, in, out)
	if err := os.WriteFile(csv, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	next := time.Date(c.StartTime.Year(), c.StartTime.Month(), c.StartTime.Day()+1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
	p.visit("/reconcile?from=" + day + "&to=" + next)
	p.doFor("import the export", 2*time.Minute, chromedp.WaitVisible(tid("upload-form")), chromedp.SetUploadFiles(`[data-testid="upload-file"]`, []string{csv}),
		click(tid("upload-submit")), chromedp.WaitVisible(`//a[contains(., "Reconcile these days")]`))
	// The import is listed only by a load after it: the page did navigate.
	p.do("reconcile the days", click(`//a[contains(., "Reconcile these days")]`), chromedp.WaitVisible(tid("import-row")))
	row := `[data-testid="rec-row"][data-state="ledger_missing_calls"]`
	if got := p.text(chromedp.CSS(row + ` [data-field="model"]`)); got != c.ResponseModel {
		t.Errorf("missing-calls row is for %q, want %q", got, c.ResponseModel)
	}
	want := fmt.Sprintf("−%.2f%%", 100/float64(len(calls)+1))
	if got := p.text(chromedp.CSS(row + ` [data-field="drift_requests"]`)); got != want {
		t.Errorf("calls drift shown as %q, want %q", got, want)
	}
	if got := p.text(chromedp.CSS(row + ` [data-field="ledger_requests"]`)); got != fmt.Sprint(len(calls)) {
		t.Errorf("ledger calls shown as %q, want %d", got, len(calls))
	}
	if got := p.text(tid("usage-imports")); !strings.Contains(got, "openai-usage.csv (sha256 ") || !strings.Contains(got, "admin") {
		t.Errorf("the import's provenance is not listed: %q", got)
	}
	// Where the tenant's calls went: every call span the collector
	// received was written, and the ledger holds each once.
	acct := fmt.Sprintf(`[data-testid="completeness-row"][data-tenant=%q]`, c.Tenant)
	p.do("the completeness account", chromedp.WaitVisible(acct))
	received := p.text(chromedp.CSS(acct + ` [data-field="received"]`))
	if n, err := strconv.Atoi(received); err != nil || n < len(calls) {
		t.Errorf("received shown as %q, want at least the %d calls", received, len(calls))
	}
	for _, f := range []string{"written", "ledger_spans"} {
		if got := p.text(chromedp.CSS(acct + ` [data-field="` + f + `"]`)); got != received {
			t.Errorf("%s shown as %q, received %q", f, got, received)
		}
	}
	if got := p.text(chromedp.CSS(acct + ` [data-field="pending"]`)); got != "0" {
		t.Errorf("in queue or lost shown as %q, want 0", got)
	}
	// The malformed request, per tenant and reason: the unknown sender's.
	for tenant, want := range map[string]string{conventions.UnknownTenant: "1", c.Tenant: "0"} {
		row := fmt.Sprintf(`[data-testid="completeness-row"][data-tenant=%q]`, tenant)
		p.do("the completeness row of "+tenant, chromedp.WaitVisible(row))
		if got := p.text(chromedp.CSS(row + ` [data-field="refused_malformed"]`)); got != want {
			t.Errorf("%s: requests refused as malformed shown as %q, want %s", tenant, got, want)
		}
	}
	if got := p.text(chromedp.CSS(acct + ` [data-field="dropped_in_app"]`)); got != "0" {
		t.Errorf("dropped in the app shown as %q, want 0 (the app blocks rather than drop)", got)
	}
	p.shot("reconcile")
}
