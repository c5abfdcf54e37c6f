package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/usage"
)

// TestUsageImportPullAndReconcile: a CSV export and a pull from the fake
// provider's admin endpoint are imported by the CLI, and docket reconcile
// prints the table and fails --check on the cell the ledger is short of.
func TestUsageImportPullAndReconcile(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	dir := t.TempDir()
	ctx := context.Background()
	store := openDataLedger(t, dir)

	day := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s, _ := fakeprovider.New(fakeprovider.Config{})
	u, _ := fakeprovider.NewUsage(s, fakeprovider.UsageConfig{AdminKey: "admin-key-for-test", Now: func() time.Time { return day }})
	srv := httptest.NewServer(u)
	defer srv.Close()
	var calls []ledger.Call
	for i := 0; i < 4; i++ {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if i < 3 { // one call never reached the ledger
			in, out, cached := int64(10), int64(0), int64(0)
			calls = append(calls, ledger.Call{Tenant: "t", TraceID: strings.Repeat("ab", 15) + "0" + string(rune('1'+i)), SpanID: "b7ad6b7169203331",
				StartTime: day, EndTime: day, Provider: "openai", ResponseModel: "gpt-4o-2024-08-06", InputTokens: &in, OutputTokens: &out,
				CacheReadTokens: &cached, Status: ledger.StatusOK})
		}
	}
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "admin.key")
	if err := os.WriteFile(keyFile, []byte("admin-key-for-test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := runCommand(ctx, usageCommand(), "pull", "--data", dir, "--actor", "ines", "--provider", "openai", "--base-url", srv.URL,
		"--admin-key-file", keyFile, "--from", "2026-11-29", "--to", "2026-12-01")
	if err != nil || !strings.Contains(out, "api by ines") || !strings.Contains(out, "1 rows") || strings.Contains(out, "admin-key-for-test") {
		t.Fatalf("pull: %v\n%s", err, out)
	}
	out, err = runCommand(ctx, usageCommand(), "import", "--data", dir, "--actor", "ines", "--provider", "anthropic",
		"--file", filepath.Join("..", "..", "ledger", "usage", "testdata", "anthropic_usage.csv"))
	if err != nil || !strings.Contains(out, "anthropic_usage.csv (sha256 ") || !strings.Contains(out, "2 rows") {
		t.Fatalf("import: %v\n%s", err, out)
	}
	out, err = runCommand(ctx, reconcileCommand(), "--data", dir, "--from", "2026-11-29", "--to", "2026-12-01", "--check")
	if !errors.Is(err, errDrift) {
		t.Errorf("--check with a missing call: %v", err)
	}
	for _, want := range []string{"2026-11-30     openai         gpt-4o-2024-08-06             3               4      -25.00%", "ledger_missing_calls", "ledger_missing_calls: 3"} {
		if !strings.Contains(out, want) {
			t.Errorf("reconcile output lacks %q:\n%s", want, out)
		}
	}
	if _, err := runCommand(ctx, usageCommand(), "import", "--data", dir, "--actor", "ines", "--provider", "gemini", "--file", keyFile); err == nil {
		t.Error("an unknown provider was accepted")
	}
	if _, err := usage.AdminKey("openai", filepath.Join(dir, "missing")); err == nil {
		t.Error("a missing key file was accepted")
	}
}
