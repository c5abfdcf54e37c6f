package e2e_test

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/distribution"
	"github.com/docketlabs/docket/replay/genai"
	"github.com/docketlabs/docket/replay/tokenizer"
	"github.com/docketlabs/docket/ui/apiclient"
)

// An auditor replays a call from its complaint page while docket runs:
// N, a budget and a reason; the page follows the run and then shows the
// exact-match rate and the first divergence in characters and tokens. The
// provider is the fake one, which ends every 4th answer to an input
// differently, so 6 of 8 replays match.
func TestReplayFromTheComplaintPage(t *testing.T) {
	provider := proctest.Build(t, "github.com/docketlabs/docket/examples/fakeprovider")
	providerPort := proctest.FreePort(t)
	fake := exec.Command(provider, "-listen", "127.0.0.1:"+providerPort, "-vary-every", "4")
	if err := fake.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(fake) })
	waitHTTP(t, "http://127.0.0.1:"+providerPort)
	// Docket's replays and the example app both talk to it.
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:"+providerPort+"/v1")
	t.Setenv("OPENAI_API_KEY", "test")

	s := startStack(t)
	trace := s.ask("user0001@example.com", "How do I reset my password? The reset link expired.")
	s.flush()
	audePW := s.addUser("aude", "default=auditor")
	const audeNew, adminNew = "aude passphrase for the replay test", "admin passphrase for the replay test"
	const reason = "complaint 4711: is the answer reproducible?"
	ctx := context.Background()

	p := newPage(t, s.uiURL, t.TempDir())
	p.visit("/complaints/" + trace)
	p.signIn("aude", audePW)
	p.changeOneTimePassword(audePW, audeNew)
	aude, err := apiclient.SignIn(ctx, s.uiURL, "aude", audeNew)
	if err != nil {
		t.Fatal(err)
	}
	s.waitEvidence(aude, trace)

	// What the page must show, from the texts themselves: the original
	// answer (revealed through the audited path) and the fake's variant.
	var ev struct {
		Calls []ledger.Call `json:"calls"`
	}
	if err := aude.Get(ctx, "/api/v1/evidence/"+trace, &ev); err != nil || len(ev.Calls) != 1 {
		t.Fatalf("evidence: %v, %d calls", err, len(ev.Calls))
	}
	var out struct {
		Content string `json:"content"`
	}
	if err := aude.Post(ctx, "/api/v1/reveal", map[string]string{"trace_id": trace, "ref": ev.Calls[0].OutputRef, "reason": reason}, &out); err != nil {
		t.Fatal(err)
	}
	msgs, err := genai.ParseMessages([]byte(out.Content))
	if err != nil {
		t.Fatal(err)
	}
	original := msgs[0].Text()
	cut := strings.LastIndex(strings.TrimSuffix(original, "."), ". ")
	variant := original[:cut+2] + "Please contact support, variant 1."
	tok, _ := tokenizer.For(ev.Calls[0].Provider, ev.Calls[0].ResponseModel)
	if tok == nil {
		t.Fatalf("no tokenizer for %s %s", ev.Calls[0].Provider, ev.Calls[0].ResponseModel)
	}
	want := distribution.Analyze(original, []string{variant}, distribution.Options{Tokenizer: tok}).Variants[0].Divergence
	if want.Token == nil {
		t.Fatalf("no token position for the variant: %+v", want)
	}

	// Bounds are the server's: N over the limit is refused.
	err = aude.Post(ctx, "/api/v1/replays", map[string]any{"trace_id": trace, "span_id": ev.Calls[0].SpanID, "n": 21, "max_cost_usd": "0.10", "reason": reason}, nil)
	if err == nil || !strings.Contains(err.Error(), "N must be 1 to 20") {
		t.Fatalf("N over the limit: %v", err)
	}

	p.visit("/complaints/" + trace)
	p.do("fill the replay form", chromedp.WaitVisible(tid("replay-form")),
		chromedp.SetValue(tid("replay-n"), "8"), chromedp.SetValue(tid("replay-budget"), "0.10"),
		chromedp.SendKeys(tid("replay-reason"), reason))
	p.shot("complaint-replay-form")
	p.do("start the replay", click(tid("replay-submit")))
	// The run's progress shows while it runs; the page shows the evidence
	// again when it ends, with the new run's record.
	rec := chromedp.CSS(`[data-testid="replay"]`)
	wctx, cancel := p.within(2 * time.Minute)
	defer cancel()
	if err := chromedp.Do(wctx, chromedp.WaitVisible(rec)); err != nil {
		t.Fatalf("no replay record on the page: %v\n%s\n%s", err, p.bodyText(), s.logText())
	}
	if got := p.text(chromedp.CSS(`[data-testid="replay"] [data-field="exact_matches"]`)); got != "75.0% (6/8)" {
		t.Errorf("exact matches shown as %q, want 75.0%% (6/8)", got)
	}
	got := p.text(chromedp.CSS(`[data-testid="replay"] [data-field="first_divergence"]`))
	if got != want.String() || !strings.Contains(got, "character ") || !strings.Contains(got, " of ") || !strings.Contains(got, "(o200k_base)") {
		t.Errorf("first divergence shown as %q, want %q", got, want.String())
	}
	for field, want := range map[string]string{"actor": "aude", "purpose": reason, "status": replay.StatusReplayed} {
		if got := p.text(chromedp.CSS(fmt.Sprintf(`[data-testid="replay"] [data-field=%q]`, field))); got != want {
			t.Errorf("replay %s shown as %q, want %q", field, got, want)
		}
	}
	p.shot("complaint-replayed-from-page")

	// The run is on record in the access log, with its reason.
	p.signOut()
	p.signIn("admin", s.admin)
	p.changeOneTimePassword(s.admin, adminNew)
	admin, err := apiclient.SignIn(ctx, s.uiURL, "admin", adminNew)
	if err != nil {
		t.Fatal(err)
	}
	var log struct {
		Entries []ledgerstore.AccessEntry `json:"entries"`
	}
	if err := admin.Get(ctx, "/api/v1/access-log?action="+replay.ActionReplay, &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Entries) != 1 || log.Entries[0].Actor != "aude" || log.Entries[0].Reason != reason || log.Entries[0].TraceID != trace ||
		!strings.Contains(log.Entries[0].Detail, "n=8 max_calls=8 max_cost_usd=0.10") {
		t.Fatalf("replay access-log entries %+v", log.Entries)
	}
}
