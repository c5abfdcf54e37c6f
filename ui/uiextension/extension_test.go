package uiextension

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/docketlabs/docket/contentstore/contentstoreextension"
	"github.com/docketlabs/docket/internal/configtest"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/ledgerstorageextension"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/lifecycle/lifecycleextension"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ui/auth"
	"github.com/docketlabs/docket/ui/uiextension/internal/metadata"
)

var ctx = context.Background()

// host offers the extensions a started extension may look up.
type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

// A config that ran retention in the UI is refused, not silently left
// without it.
func TestLifecycleIntervalIsRefused(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	configtest.Load(t, "docketui/old_interval", cfg, nil)
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "lifecycle extension") {
		t.Fatalf("lifecycle_interval: %v, want a pointer to the lifecycle extension", err)
	}
	if def := createDefaultConfig().(*Config); def.Validate() != nil {
		t.Fatalf("default config: %+v", def)
	}
}

// startExtension creates and starts the extension id of testdata/config.yaml
// (with overrides) on host, and shuts it down when the test ends.
func startExtension(t *testing.T, f extension.Factory, id string, overrides map[string]any, h host) component.Component {
	t.Helper()
	cfg := f.CreateDefaultConfig()
	configtest.Load(t, id, cfg, overrides)
	ext, err := f.Create(ctx, extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err = ext.Start(ctx, h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Shutdown(ctx) })
	return ext
}

// TestShowsTheLifecycleExtension: the UI reads the ledger of the
// ledgerstorage extension, and the admin API shows the runner of the
// lifecycle extension it names, and its expiry runs.
func TestShowsTheLifecycleExtension(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	dir := t.TempDir()
	h := host{}
	h[component.MustNewID("ledgerstorage")] = startExtension(t, ledgerstorageextension.NewFactory(), "ledgerstorage",
		map[string]any{"embedded": map[string]any{"path": filepath.Join(dir, "ledger")}}, h)
	h[component.MustNewID("contentstore")] = startExtension(t, contentstoreextension.NewFactory(), "contentstore",
		map[string]any{"directory": map[string]any{"path": filepath.Join(dir, "content")}, "secret_file": filepath.Join(dir, "content.secret")}, h)
	h[component.MustNewID("lifecycle")] = startExtension(t, lifecycleextension.NewFactory(), "lifecycle", nil, h)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	startExtension(t, NewFactory(), "docketui", map[string]any{"endpoint": addr, "export_directory": filepath.Join(dir, "exports")}, h)

	var status struct {
		Runner     *lifecycle.RunnerStatus `json:"runner"`
		ExpiryRuns []lifecycle.ExpiryRun   `json:"expiry_runs"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/lifecycle", nil)
		req.Header.Set("X-Forwarded-User", "ops")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&status)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /api/v1/lifecycle: %s, %v", resp.Status, err)
		}
		if status.Runner != nil && status.Runner.LastRun != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status.Runner == nil || status.Runner.LastRun == nil {
		t.Fatalf("the runner never ran: %+v", status)
	}
	last := status.Runner.LastRun
	if last.Status != lifecycle.RunDone || last.RunBy != lifecycle.SystemPrincipal.User || status.Runner.LastError != "" {
		t.Fatalf("last run %+v, runner %+v", last, status.Runner)
	}
	listed := false
	for _, r := range status.ExpiryRuns {
		listed = listed || r.ID == last.ID
	}
	if !listed {
		t.Fatalf("run %s not among the expiry runs %+v", last.ID, status.ExpiryRuns)
	}
	if status.Runner.Orphans == nil {
		t.Fatalf("the cycle reported no orphan scan: %+v", status.Runner)
	}
}

// TestOneTimePasswordStaysOutOfTheLog: a first start in builtin mode with
// stderr not a terminal (as under go test, or a service manager) writes
// the admin's password to a 0600 file beside the users file, and the
// collector's log names the file but never holds the password.
func TestOneTimePasswordStaysOutOfTheLog(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	dir := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := createDefaultConfig().(*Config)
	cfg.Endpoint, cfg.ExportDirectory = addr, filepath.Join(dir, "exports")
	cfg.Auth.UsersFile = filepath.Join(dir, "ui-users.json")
	cfg.Storage.Embedded = &storageconfig.EmbeddedConfig{Path: filepath.Join(dir, "ledger")}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	set := extensiontest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	ui, err := NewFactory().Create(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ui.Start(ctx, host{}); err != nil {
		t.Fatal(err)
	}
	defer ui.Shutdown(ctx)
	file := auth.OneTimePasswordFile(cfg.Auth.UsersFile)
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("one-time password file: %v, mode %v; want 0600", err, info.Mode().Perm())
	}
	raw, _ := os.ReadFile(file)
	password := strings.TrimSpace(string(raw[strings.LastIndexByte(strings.TrimSpace(string(raw)), '\n')+1:]))
	if len(password) != 26 {
		t.Fatalf("no password in %q", raw)
	}
	named := false
	for _, e := range logs.All() {
		line := e.Message + fmt.Sprint(e.ContextMap())
		if strings.Contains(line, password) {
			t.Fatalf("the one-time password is in the log: %s", line)
		}
		named = named || strings.Contains(line, file)
	}
	if !named {
		t.Fatal("the log does not say where the one-time password is")
	}
}
