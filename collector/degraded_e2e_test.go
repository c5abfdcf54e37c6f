package collector_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/proctest"
)

// unopenable makes dir a directory the ledger cannot open (a read-only
// tmpfs as root, mode 0500 otherwise) and returns how to undo it.
func unopenable(t *testing.T, dir string) (undo func()) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		return func() { _ = os.Chmod(dir, 0o700) }
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a read-only tmpfs: %v %s", err, out)
	}
	mounted := true
	t.Cleanup(func() {
		if mounted {
			_ = exec.Command("umount", "-l", dir).Run()
		}
	})
	return func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Fatalf("umount: %v %s", err, out)
		}
		mounted = false
	}
}

type uiStatus struct {
	Ledger struct {
		Available bool   `json:"available"`
		Error     string `json:"error"`
	} `json:"ledger"`
	ContentUnavailable bool `json:"content_store_unavailable"`
}

func (p *collectorProc) uiStatus() (uiStatus, int, error) {
	var s uiStatus
	req, _ := http.NewRequest(http.MethodGet, p.apiURL+"/api/v1/status", nil)
	req.Header.Set("X-Forwarded-User", "e2e")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return s, 0, err
	}
	defer resp.Body.Close()
	return s, resp.StatusCode, json.NewDecoder(resp.Body).Decode(&s)
}

// The dev shape (ledger exporter, UI and content store in one process)
// starts although neither the ledger nor the content store directory can
// be opened: it takes calls into the queue, says so in the UI's status,
// its metrics, its health check and its log (without blaming another
// process), and writes every call once the directories can be opened.
func TestDevShapeStartsWithoutItsLedger(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	metricsPort, healthPort := proctest.FreePort(t), proctest.FreePort(t)
	p := newCollectorProc(t, docketBinary(t), "dev-degraded.yaml", "E2E_METRICS_PORT="+metricsPort, "E2E_HEALTH_PORT="+healthPort)
	health := func() string {
		resp, err := http.Get("http://127.0.0.1:" + healthPort + "/")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		var b struct{ Status string }
		_ = json.NewDecoder(resp.Body).Decode(&b)
		return fmt.Sprint(resp.StatusCode, " ", b.Status)
	}
	metricsURL := "http://127.0.0.1:" + metricsPort + "/metrics"
	t.Cleanup(func() {
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(p.dir, "collector.log"))
			t.Logf("collector log:\n%s", log[max(0, len(log)-6000):])
		}
	})
	restoreLedger := unopenable(t, filepath.Join(p.dir, "ledger"))
	restoreContent := unopenable(t, filepath.Join(p.dir, "content"))
	p.start()
	var st uiStatus
	waitFor(t, "the UI answering while the ledger cannot be opened", time.Minute, func() bool {
		var code int
		var err error
		st, code, err = p.uiStatus()
		if p.cmd.ProcessState != nil {
			t.Fatalf("collector exited: %s", p.cmd.ProcessState)
		}
		return err == nil && code == http.StatusOK
	})
	if st.Ledger.Available || !strings.Contains(st.Ledger.Error, "not writable") || strings.Contains(st.Ledger.Error, "another process") || !st.ContentUnavailable {
		t.Fatalf("status while the ledger cannot be opened: %+v", st)
	}
	if _, err := p.stats(); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("ledger stats while unavailable: %v, want 503", err)
	}
	waitFor(t, "the receiver listening", time.Minute, func() bool {
		resp, err := http.Get(p.otlpURL)
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	const calls = 2000
	for first := 0; first < calls; first += 200 {
		if a := post(p.otlpURL, bpBatch(first, 200)); a.status != http.StatusOK {
			t.Fatalf("calls refused while the ledger is unavailable: %d %v", a.status, a.err)
		}
	}
	waitFor(t, "the outage in metrics", time.Minute, func() bool {
		return metric(t, metricsURL, "otelcol_exporter_ledger_storage_available") == 0 && metric(t, metricsURL, "otelcol_exporter_queue_size") == calls &&
			metric(t, metricsURL, "otelcol_extension_contentstore_available") == 0
	})
	// Alive (200: a restart would not help) and saying it is degraded.
	if h := health(); h != "200 StatusRecoverableError" {
		t.Fatalf("health check while degraded: %s", h)
	}

	restoreLedger()
	restoreContent()
	waitFor(t, "the UI reopening the ledger and the content store", time.Minute, func() bool {
		st, code, err := p.uiStatus()
		return err == nil && code == http.StatusOK && st.Ledger.Available && !st.ContentUnavailable
	})
	p.waitCalls(calls, 2*time.Minute)
	waitFor(t, "storage available in metrics", time.Minute, func() bool {
		return metric(t, metricsURL, "otelcol_exporter_ledger_storage_available") == 1 && metric(t, metricsURL, "otelcol_exporter_queue_size") == 0 &&
			metric(t, metricsURL, "otelcol_extension_contentstore_available") == 1 && health() == "200 StatusOK"
	})
	log, _ := os.ReadFile(filepath.Join(p.dir, "collector.log"))
	if strings.Contains(string(log), "another process") {
		t.Fatalf("the log blames another process for a directory that was not writable:\n%s", log)
	}
}
