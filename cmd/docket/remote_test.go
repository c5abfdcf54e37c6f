package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ui/api"
	"github.com/docketlabs/docket/ui/apiclient"
	"github.com/docketlabs/docket/ui/auth"
)

// The CLI against a running instance: the same commands, through the
// API, under the token's service account; and a held data directory
// leads to the announced API.
func TestCommandsThroughRunningInstance(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	dir := t.TempDir()
	ctx := context.Background()
	local := localFlags{storage: storageFlags{dataDir: dir}, actor: "setup"}
	d, err := local.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	trace := "1af7651916cd43dd8448eb211c80319c"
	ref := storeCall(t, d, trace, "remote canary 7731").InputRef
	authn, _, err := auth.New(auth.DefaultConfig(usersFile(local)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := lifecycle.New(d.ledger, d.content, lifecycle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.Handler(api.Deps{Ledger: d.ledger, Content: d.content, Lifecycle: m, Auth: authn,
		ExportDir: filepath.Join(dir, "exports"), Logger: slog.New(slog.DiscardHandler)}))
	defer srv.Close()
	tokens := authn.Tokens()
	admin, _, err := tokens.Create("ops-bot", auth.Grants{"acme": access.RoleAdmin}, "setup", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	viewer, _, err := tokens.Create("dash", auth.Grants{"acme": access.RoleViewer}, "setup", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	run := func(cmd *cobra.Command, token string, args ...string) (string, string, error) {
		return runWithToken(t, ctx, cmd, token, args...)
	}

	// content get: the server's reveal, recorded under the service account.
	out, _, err := run(contentCommand(), admin, "get", "--server", srv.URL, "--trace", trace, "--reason", "ticket 12", ref)
	embedded, lerr := (&access.Reader{Content: d.content, Ledger: d.ledger}).Reveal(ctx, d.operator,
		access.RevealRequest{Tenant: "acme", TraceID: trace, Ref: ref, Reason: "compare"})
	if err != nil || lerr != nil || !strings.Contains(out, "remote canary 7731") || out != string(embedded)+"\n" {
		t.Fatalf("content get --server: %q %v; embedded mode prints %q (%v)", out, err, embedded, lerr)
	}
	if _, _, err := run(contentCommand(), viewer, "get", "--server", srv.URL, "--trace", trace, "--reason", "x", ref); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("viewer token content get: %v", err)
	}
	if _, _, err := run(contentCommand(), "", "get", "--server", srv.URL, "--trace", trace, "--reason", "x", ref); err == nil || !strings.Contains(err.Error(), tokenEnv) {
		t.Fatalf("--server without a token: %v", err)
	}
	log, err := d.ledger.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: "acme", Actor: "service:ops-bot"})
	if err != nil || len(log) != 1 || log[0].Outcome != access.OutcomeAllowed || log[0].Reason != "ticket 12" {
		t.Fatalf("access log of the remote read: %v %+v", err, log)
	}

	// export: the server's bundle, downloaded and checked; it verifies.
	bundle := filepath.Join(t.TempDir(), "bundle")
	out, errOut, err := run(exportCommand(), admin, "--server", srv.URL, "--tenant", "acme", "--from", "2020-01-01", "--to", "2100-01-01",
		"--reason", "audit 3", "--out", bundle)
	if err != nil || !strings.Contains(out, "bundle "+bundle) || !strings.Contains(out, "calls 1,") || !strings.Contains(errOut, "export: downloaded") {
		t.Fatalf("export --server: %v\n%s\n%s", err, out, errOut)
	}
	if out, _, err := run(exportCommand(), "", "verify", bundle); err != nil || !strings.Contains(out, "bundle ok") {
		t.Fatalf("verify of the downloaded bundle: %v %s", err, out)
	}
	denied := filepath.Join(t.TempDir(), "denied")
	if _, _, err := run(exportCommand(), viewer, "--server", srv.URL, "--from", "2020-01-01", "--to", "2100-01-01", "--reason", "r", "--out", denied); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("viewer token export: %v", err)
	}
	if _, err := os.Stat(denied); !os.IsNotExist(err) {
		t.Fatalf("a refused export left its directory: %v", err)
	}

	// lifecycle: a hold through the API, listed as the embedded mode lists.
	out, _, err = run(lifecycleCommand(), admin, "hold", "create", "--server", srv.URL, "--tenant", "acme", "--trace", trace, "--reason", "case 7")
	if err != nil {
		t.Fatalf("hold create --server: %v", err)
	}
	var created struct {
		Hold    lifecycle.Hold        `json:"hold"`
		Applied lifecycle.HoldApplied `json:"applied"`
	}
	if err := json.Unmarshal([]byte(out), &created); err != nil || created.Hold.CreatedBy != "service:ops-bot" || created.Hold.Status != "active" {
		t.Fatalf("hold create output: %v %s", err, out)
	}
	out, _, err = run(lifecycleCommand(), admin, "hold", "list", "--server", srv.URL)
	var holds []lifecycle.Hold
	if err != nil || json.Unmarshal([]byte(out), &holds) != nil || len(holds) != 1 || holds[0].ID != created.Hold.ID {
		t.Fatalf("hold list --server: %v %s", err, out)
	}
	// A deletion request is carried out by the server in the background;
	// the command follows it and prints the job after its run, blocked by
	// the hold, as the embedded mode does; run again, it still is.
	out, _, err = run(lifecycleCommand(), admin, "delete", "request", "--server", srv.URL, "--tenant", "acme", "--trace", trace, "--reason", "erasure request 9")
	var job lifecycle.DeletionJob
	if err != nil || json.Unmarshal([]byte(out), &job) != nil || job.ID == "" || job.RequestedBy != "service:ops-bot" || job.Status != "blocked_by_hold" {
		t.Fatalf("delete request --server: %v %s", err, out)
	}
	out, _, err = run(lifecycleCommand(), admin, "delete", "run", "--server", srv.URL, job.ID)
	if err != nil || json.Unmarshal([]byte(out), &job) != nil || job.Status != "blocked_by_hold" {
		t.Fatalf("delete run --server: %v %s", err, out)
	}
	out, _, err = run(lifecycleCommand(), admin, "expire", "--server", srv.URL, "--tenant", "acme", "--dry-run")
	var expiry lifecycle.ExpiryRun
	if err != nil || json.Unmarshal([]byte(out), &expiry) != nil || !expiry.DryRun || expiry.RunBy != "service:ops-bot" {
		t.Fatalf("expire --server: %v %s", err, out)
	}
	out, _, err = run(lifecycleCommand(), admin, "events", "--server", srv.URL, "--hold", created.Hold.ID)
	var events []lifecycle.ContentEvent
	if err != nil || json.Unmarshal([]byte(out), &events) != nil {
		t.Fatalf("events --server: %v %s", err, out)
	}
	out, _, err = run(lifecycleCommand(), admin, "runs", "--server", srv.URL)
	var runs []lifecycle.ExpiryRun
	if err != nil || json.Unmarshal([]byte(out), &runs) != nil || len(runs) != 1 || runs[0].ID != expiry.ID {
		t.Fatalf("runs --server: %v %s", err, out)
	}
	if _, _, err := run(lifecycleCommand(), viewer, "hold", "list", "--server", srv.URL); err == nil || !strings.Contains(err.Error(), "403") {
		t.Fatalf("viewer token hold list: %v", err)
	}
	if _, _, err := run(lifecycleCommand(), admin, "runs", "--server", srv.URL, "--content-days", "3"); err == nil {
		t.Fatal("a local retention flag was accepted with --server")
	}

	// A held data directory: the announced API, not a lock error.
	if err := apiclient.Announce(filepath.Join(dir, "ledger"), srv.URL); err != nil {
		t.Fatal(err)
	}
	defer apiclient.Withdraw(filepath.Join(dir, "ledger"))
	_, _, err = run(contentCommand(), "", "get", "--data", dir, "--trace", trace, "--reason", "x", ref)
	if err == nil || !strings.Contains(err.Error(), "--server "+srv.URL) {
		t.Fatalf("held directory without a token: %v", err)
	}
	out, errOut, err = run(contentCommand(), admin, "get", "--data", dir, "--trace", trace, "--reason", "ticket 13", ref)
	if err != nil || !strings.Contains(out, "remote canary 7731") || !strings.Contains(errOut, srv.URL) {
		t.Fatalf("held directory with a token: %v %q %q", err, out, errOut)
	}
}

// runWithToken runs cmd with token in $DOCKET_TOKEN and returns what it
// printed; the token must not be among it.
func runWithToken(t *testing.T, ctx context.Context, cmd *cobra.Command, token string, args ...string) (string, string, error) {
	t.Helper()
	t.Setenv(tokenEnv, token)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if strings.Contains(out.String()+errOut.String(), token) && token != "" {
		t.Fatalf("the token was printed: %s %s", out.String(), errOut.String())
	}
	return out.String(), errOut.String(), err
}

// An announcement whose directory nobody holds (its process was killed
// and the PID taken by another) is ignored: the local data opens.
func TestStaleAnnouncementIsIgnored(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "ledger"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := apiclient.Announce(filepath.Join(dir, "ledger"), "http://127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	t.Setenv(tokenEnv, "")
	local := localFlags{storage: storageFlags{dataDir: dir}}
	c, err := (&remoteFlags{}).client(&local, io.Discard)
	if err != nil || c != nil {
		t.Fatalf("stale announcement: %v %v", c, err)
	}
}
