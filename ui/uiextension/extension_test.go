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
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/docketlabs/docket/contentstore/contentstoreextension"
	"github.com/docketlabs/docket/internal/configtest"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ui/auth"
	"github.com/docketlabs/docket/ui/uiextension/internal/metadata"
	"github.com/docketlabs/docket/ui/uiextension/internal/metadatatest"
)

var ctx = context.Background()

// host offers the extensions a started extension may look up.
type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

// loadConfig reads id's section of testdata/config.yaml, with overrides,
// into cfg.
func TestNegativeLifecycleIntervalIsRefused(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	configtest.Load(t, "docketui/negative_interval", cfg, nil)
	if err := cfg.Validate(); err == nil {
		t.Fatal("a negative lifecycle_interval was accepted")
	}
	if def := createDefaultConfig().(*Config); def.LifecycleInterval != time.Hour || def.Validate() != nil {
		t.Fatalf("default config: %+v", def)
	}
}

// TestLifecycleRunsInTheBackground: with a content store, the extension
// runs the lifecycle on its interval, and the admin API shows the runner
// and its expiry runs.
func TestLifecycleRunsInTheBackground(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	dir := t.TempDir()
	csFactory := contentstoreextension.NewFactory()
	csCfg := csFactory.CreateDefaultConfig()
	configtest.Load(t, "contentstore", csCfg, map[string]any{
		"directory": map[string]any{"path": filepath.Join(dir, "content")}, "secret_file": filepath.Join(dir, "content.secret")})
	cs, err := csFactory.Create(ctx, extensiontest.NewNopSettings(csFactory.Type()), csCfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.Start(ctx, host{}); err != nil {
		t.Fatal(err)
	}
	defer cs.Shutdown(ctx)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := createDefaultConfig().(*Config)
	configtest.Load(t, "docketui", cfg, map[string]any{"endpoint": addr, "export_directory": filepath.Join(dir, "exports"),
		"storage": map[string]any{"embedded": map[string]any{"path": filepath.Join(dir, "ledger")}}})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(ctx) })
	set := extensiontest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	ui, err := NewFactory().Create(ctx, set, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ui.Start(ctx, host{component.MustNewID("contentstore"): cs}); err != nil {
		t.Fatal(err)
	}
	defer ui.Shutdown(ctx)

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
		t.Fatalf("last run %+v, error %q", last, status.Runner.LastError)
	}
	listed := false
	for _, r := range status.ExpiryRuns {
		listed = listed || r.ID == last.ID
	}
	if !listed {
		t.Fatalf("run %s not among the expiry runs %+v", last.ID, status.ExpiryRuns)
	}
	// The gauge reports the cycle's orphan scan: none in a new store.
	if status.Runner.Orphans == nil {
		t.Fatalf("the cycle reported no orphan scan: %+v", status.Runner)
	}
	metadatatest.AssertEqualExtensionDocketuiLifecycleOrphanObjects(t, tel,
		[]metricdata.DataPoint[int64]{{Value: int64(status.Runner.Orphans.Orphans)}}, metricdatatest.IgnoreTimestamp())
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
