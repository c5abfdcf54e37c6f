package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ui/apiclient"
)

// An admin creates an API token in the UI; with it, `docket export
// --server` makes a bundle of the running instance while the collector
// keeps ingesting, the bundle verifies offline, every call sent during the
// export lands in the ledger, and once the token is revoked in the UI it
// is refused.
func TestTokenExportFromRunningInstance(t *testing.T) {
	s := startStack(t)
	before := []string{}
	for i := 0; i < 5; i++ {
		before = append(before, s.ask(fmt.Sprintf("user%04d@example.com", i), fmt.Sprintf("Where is my order %d?", i)))
	}
	const adminPW = "admin passphrase for the token test"
	p := newPage(t, s.uiURL, t.TempDir())
	p.visit("/admin/tokens")
	p.signIn("admin", s.admin)
	p.changeOneTimePassword(s.admin, adminPW)
	admin, err := apiclient.SignIn(context.Background(), s.uiURL, "admin", adminPW)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range before {
		s.waitEvidence(admin, id)
	}

	p.visit("/admin/tokens")
	p.do("create a token", chromedp.WaitVisible(tid("token-form")),
		chromedp.SendKeys(tid("token-name"), "audit-cli"),
		chromedp.SendKeys(tid("token-tenant"), "default"),
		chromedp.SetValue(tid("token-role"), "auditor"),
		click(tid("token-submit")),
		chromedp.WaitVisible(tid("token-secret")),
		chromedp.WaitVisible(tid("token-row")))
	token := eval[string](p, `document.querySelector('[data-testid="token-secret"]').value`)
	if !strings.HasPrefix(token, "dkt_") {
		t.Fatalf("the page showed no token: %q", token)
	}
	if got := p.text(chromedp.CSS(`[data-testid="token-row"] [data-field="status"]`)); got != "active" {
		t.Fatalf("new token's status: %q", got)
	}
	p.shot("tokens")
	// Shown once: a reload lists the token without its secret.
	p.visit("/admin/tokens")
	p.text(tid("token-row"))
	if html := eval[string](p, `document.body.innerHTML`); strings.Contains(html, token[len(token)-20:]) {
		t.Fatal("the token's secret is shown again after a reload")
	}

	// Without a token, the held data directory points to the running API.
	out, err := exec.Command(s.bin, "export", "--data", s.data, "--from", "2020-01-01", "--to", "2100-01-01",
		"--out", filepath.Join(t.TempDir(), "b"), "--reason", "r").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--server "+s.uiURL) || strings.Contains(string(out), "Cannot lock") {
		t.Fatalf("export on a held directory without a token: %v\n%s", err, out)
	}

	// Ingestion goes on during the export.
	var mu sync.Mutex
	var during []string
	var sendErr error
	stopSending := make(chan struct{})
	sending := sync.WaitGroup{}
	sending.Add(1)
	go func() {
		defer sending.Done()
		for i := 0; ; i++ {
			select {
			case <-stopSending:
				return
			default:
			}
			id, err := askQuietly(s.appURL, fmt.Sprintf("user%04d@example.com", i%20), fmt.Sprintf("During the export, question %d", i))
			mu.Lock()
			if err != nil && sendErr == nil {
				sendErr = err
			}
			if err == nil {
				during = append(during, id)
			}
			mu.Unlock()
			time.Sleep(250 * time.Millisecond)
		}
	}()
	time.Sleep(time.Second)
	bundle := filepath.Join(t.TempDir(), "bundle")
	export := exec.Command(s.bin, "export", "--server", s.uiURL, "--tenant", "default", "--from", time.Now().Add(-time.Hour).UTC().Format(time.RFC3339),
		"--to", time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "--format", "jsonl", "--out", bundle,
		"--reason", "quarterly audit, exported while ingesting")
	export.Env = append(os.Environ(), "DOCKET_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	export.Stdout, export.Stderr = &stdout, &stderr
	exportErr := export.Run()
	time.Sleep(time.Second)
	close(stopSending)
	sending.Wait()
	if exportErr != nil {
		t.Fatalf("docket export --server: %v\nstdout: %s\nstderr: %s\n%s", exportErr, stdout.String(), stderr.String(), s.logText())
	}
	if strings.Contains(stdout.String()+stderr.String(), token) {
		t.Fatal("docket export printed the token")
	}
	if !strings.Contains(stderr.String(), "export: downloaded") || !strings.Contains(stdout.String(), "bundle "+bundle) || !strings.Contains(stdout.String(), "root ") {
		t.Fatalf("export output:\nstdout: %s\nstderr: %s", stdout.String(), stderr.String())
	}
	if out, err := exec.Command(s.bin, "export", "verify", bundle).CombinedOutput(); err != nil {
		t.Fatalf("docket export verify: %v\n%s", err, out)
	}
	mu.Lock()
	sent, firstErr := append([]string(nil), during...), sendErr
	mu.Unlock()
	if firstErr != nil {
		t.Fatalf("the example app failed during the export: %v", firstErr)
	}
	if len(sent) < 3 {
		t.Fatalf("only %d calls were sent during the export", len(sent))
	}
	s.flush()
	for _, id := range sent {
		s.waitEvidence(admin, id)
	}
	t.Logf("export while ingesting: %d calls sent during it, all %d in the ledger; progress:\n%s", len(sent), len(sent), stderr.String())

	// The export is on record under the service account.
	var log struct {
		Entries []ledgerstore.AccessEntry `json:"entries"`
	}
	if err := admin.Get(context.Background(), "/api/v1/access-log?actor=service:audit-cli&action=export", &log); err != nil || len(log.Entries) != 1 {
		t.Fatalf("access log of the token's export: %v %+v", err, log.Entries)
	}

	// Revoked in the UI, the token is refused at once.
	p.visit("/admin/tokens")
	p.do("revoke", click(chromedp.CSS(`[data-testid="token-row"] [data-testid="token-revoke"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="token-row"][data-status="revoked"]`)))
	again := exec.Command(s.bin, "export", "--server", s.uiURL, "--tenant", "default", "--from", "2020-01-01", "--to", "2100-01-01",
		"--out", filepath.Join(t.TempDir(), "again"), "--reason", "after revocation")
	again.Env = append(os.Environ(), "DOCKET_TOKEN="+token)
	out, err = again.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "unauthorized") || !strings.Contains(string(out), "revoked") {
		t.Fatalf("export with a revoked token: %v\n%s", err, out)
	}
	req, _ := http.NewRequest("GET", s.uiURL+"/api/v1/calls", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("API with a revoked token: %s", resp.Status)
	}
}

// askQuietly is stack.ask for a goroutine: it returns the error.
func askQuietly(appURL, user, question string) (string, error) {
	body, _ := json.Marshal(map[string]string{"user": user, "question": question})
	resp, err := http.Post(appURL+"/ask", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		TraceID string `json:"trace_id"`
		Error   string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("ask: %s %w %s", resp.Status, err, out.Error)
	}
	return out.TraceID, nil
}
