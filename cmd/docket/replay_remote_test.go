package main

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/replaytest"
	"github.com/docketlabs/docket/replay/runs"
	"github.com/docketlabs/docket/ui/api"
	"github.com/docketlabs/docket/ui/apiclient"
	"github.com/docketlabs/docket/ui/auth"
)

// docket replay --server: the run is started on a running UI server,
// followed and printed as the embedded mode prints it; an interrupt
// cancels the server's run; a viewer's token is refused.
func TestReplayThroughRunningInstance(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	const original, alt = "Your order ships on Monday.", "Your order ships on Tuesday."
	sampled, err := fakeprovider.Sampled(3, fakeprovider.Output{Text: original, Weight: 3}, fakeprovider.Output{Text: alt, Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	// While hold is set, requests wait until their caller gives up.
	var hold atomic.Bool
	arrived := make(chan struct{}, 100)
	trace := "5bf92f3577b34da6a3ce929d0e0e4737"
	call := replay.CallID{TraceID: trace, SpanID: "c7ad6b7169203332"}
	fake, dir, local, d := replaySetup(t, func(ctx context.Context, req *fakeprovider.Request) (fakeprovider.Reply, error) {
		if hold.Load() {
			arrived <- struct{}{}
			<-ctx.Done()
			return fakeprovider.Reply{}, ctx.Err()
		}
		return sampled(ctx, req)
	}, "setup", call, original)
	ctx := context.Background()
	now := time.Now().UTC()
	manager, err := runs.New(&replay.Runner{Ledger: d.ledger, Reader: &access.Reader{Content: d.content, Ledger: d.ledger},
		Clients: fake.Clients(t), Prices: replaytest.Prices(t)}, runs.Limits{MaxN: 20, MaxCostUSD: "0.50"})
	if err != nil {
		t.Fatal(err)
	}
	defer manager.Close()
	authn, _, err := auth.New(auth.DefaultConfig(usersFile(local)))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler(api.Deps{Ledger: d.ledger, Content: d.content, Auth: authn, Replays: manager,
		ExportDir: filepath.Join(dir, "exports"), Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	auditor, _, err := authn.Tokens().Create("replay-bot", auth.Grants{"acme": access.RoleAuditor}, "setup", now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	viewer, _, err := authn.Tokens().Create("dash", auth.Grants{"acme": access.RoleViewer}, "setup", now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	run := func(ctx context.Context, token string, args ...string) (string, string, error) {
		return runWithToken(t, ctx, replayCommand(), token, args...)
	}
	const purpose = "complaint SUP-9: shipping date"

	// The embedded mode's text, for the same call and N.
	embedded, _, err := run(ctx, "", "--data", dir, "--actor", "ops-on-call", "--call", trace+":"+call.SpanID, "--n", "8", "--purpose", purpose)
	if err != nil {
		t.Fatal(err)
	}
	remote, progress, err := run(ctx, auditor, "--server", srv.URL, "--trace", trace, "--n", "8", "--max-cost-usd", "0.10", "--purpose", purpose)
	if err != nil {
		t.Fatalf("replay --server: %v\n%s", err, progress)
	}
	if !strings.Contains(progress, "started on the server") || !strings.Contains(progress, "of 8 replays done") {
		t.Fatalf("progress on stderr:\n%s", progress)
	}
	// The same report but for the run's ID and the most common
	// alternative, whose text the server does not send.
	runID := regexp.MustCompile(`^replay run [0-9a-f]+ `)
	alternative := regexp.MustCompile(`(?m)^  most common alternative .*\n`)
	want := alternative.ReplaceAllString(runID.ReplaceAllString(embedded, "replay run R "), "")
	if got := runID.ReplaceAllString(remote, "replay run R "); got != want ||
		!strings.Contains(remote, "exact match: 6/8 (75%)") || !strings.Contains(remote, "first divergence of a 2× output: character 21, token 5 of 6 (o200k_base)") {
		t.Fatalf("replay --server printed\n%s\nthe embedded mode\n%s", remote, embedded)
	}
	log, err := d.ledger.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: "acme", Actor: "service:replay-bot"})
	actions := map[string]int{}
	for _, e := range log {
		actions[e.Action]++
	}
	// The call looked up on its evidence page, the run, input and output.
	if err != nil || len(log) != 4 || actions["view"] != 1 || actions["replay"] != 1 || actions["reveal"] != 2 {
		t.Fatalf("access log of the server's run: %v %+v", err, log)
	}

	// Flags the server decides, and a missing budget, are refused.
	if _, _, err := run(ctx, auditor, "--server", srv.URL, "--trace", trace, "--concurrency", "2", "--max-cost-usd", "0.10", "--purpose", purpose); err == nil || !strings.Contains(err.Error(), "--concurrency does not apply") {
		t.Fatalf("--concurrency with --server: %v", err)
	}
	if _, _, err := run(ctx, auditor, "--server", srv.URL, "--trace", trace, "--purpose", purpose); err == nil || !strings.Contains(err.Error(), "--max-cost-usd is required") || !strings.Contains(err.Error(), "0.50") {
		t.Fatalf("no budget with --server: %v", err)
	}

	if _, _, err := run(ctx, auditor, "--server", srv.URL, "--call", trace+":"+call.SpanID, "--call", trace+":00f067aa0ba902b7", "--max-cost-usd", "0.10", "--purpose", purpose); err == nil || !strings.Contains(err.Error(), "one call per run") {
		t.Fatalf("two calls with --server: %v", err)
	}
	off := httptest.NewServer(api.Handler(api.Deps{Ledger: d.ledger, Content: d.content, Auth: authn, Logger: slog.New(slog.DiscardHandler)}))
	defer off.Close()
	if _, _, err := run(ctx, auditor, "--server", off.URL, "--trace", trace, "--max-cost-usd", "0.10", "--purpose", purpose); err == nil || !strings.Contains(err.Error(), "does not offer replay") {
		t.Fatalf("a server without replay: %v", err)
	}

	// A viewer's token: the API's refusal, and nothing sent.
	if _, _, err := run(ctx, viewer, "--server", srv.URL, "--trace", trace, "--max-cost-usd", "0.10", "--purpose", purpose); err == nil || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "auditor role") {
		t.Fatalf("viewer token: %v", err)
	}
	if log, err := d.ledger.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: "acme", Actor: "service:dash"}); err != nil || len(log) != 0 {
		t.Fatalf("the viewer's refused run left records: %v %+v", err, log)
	}

	// An interrupt cancels the server's run; the CLI waits for it to end.
	hold.Store(true)
	ictx, interrupt := context.WithCancel(ctx)
	go func() {
		<-arrived
		interrupt()
	}()
	_, progress, err = run(ictx, auditor, "--server", srv.URL, "--call", trace+":"+call.SpanID, "--n", "4", "--max-cost-usd", "0.10", "--purpose", purpose)
	hold.Store(false)
	id := regexp.MustCompile(`replay: run ([0-9a-f]+) of call`).FindStringSubmatch(progress)
	if err == nil || id == nil || !strings.Contains(progress, "cancelled on the server") {
		t.Fatalf("interrupted replay --server: %v\n%s", err, progress)
	}
	st, err := apiclient.WithToken(srv.URL, auditor).Replay(ctx, id[1])
	if err != nil || st.State != runs.StateCancelled {
		t.Fatalf("the server's run after the interrupt: %v %+v", err, st)
	}

	// A held data directory with a token: the announced API.
	if err := apiclient.Announce(filepath.Join(dir, "ledger"), srv.URL); err != nil {
		t.Fatal(err)
	}
	defer apiclient.Withdraw(filepath.Join(dir, "ledger"))
	remote, progress, err = run(ctx, auditor, "--data", dir, "--trace", trace, "--n", "4", "--max-cost-usd", "0.10", "--purpose", purpose)
	if err != nil || !strings.Contains(progress, srv.URL) || !strings.Contains(remote, "exact match: 3/4 (75%)") {
		t.Fatalf("held directory with a token: %v\n%s\n%s", err, remote, progress)
	}
}
