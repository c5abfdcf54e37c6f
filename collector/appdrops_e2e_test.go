package collector_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/proctest"
)

// sdkDropped is the example app's exit log of what its SDK counted.
var sdkDropped = regexp.MustCompile(`spans not exported .*dropped_queue_full=(\d+)`)

// TestAppSDKDropsCountedPerTenant runs the example app with the Go SDK's
// default shape shrunk (a 16-span queue that drops when full), sending as
// tenant acme, under a burst of requests: the spans its SDK dropped, by the
// SDK's own count, are what the collector's account says acme's app
// dropped before export, in the metric and the UI's API.
func TestAppSDKDropsCountedPerTenant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector and the example app")
	}
	c := startIngestCollector(t, "ingest-auth-e2e.yaml", nil, "E2E_ON_MISMATCH=refuse")
	app := startDroppingApp(t, c.grpcAddr)
	app.burst(400)
	dropped := app.stop()
	t.Logf("the SDK dropped %d spans", dropped)

	var got map[string]int
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if got = c.counter(t, completenessMetric, "tenant", "stage"); got["acme/dropped_in_app"] == dropped {
			break
		}
	}
	if got["acme/dropped_in_app"] != dropped || got["globex/dropped_in_app"] != 0 {
		t.Errorf("%s: %v; want acme/dropped_in_app = %d, the SDK's count", completenessMetric, got, dropped)
	}
	var body struct {
		Collector *completeness.Snapshot `json:"collector"`
	}
	if err := c.get("/api/v1/completeness", &body); err != nil {
		t.Fatal(err)
	}
	for _, tn := range body.Collector.Tenants {
		if tn.Tenant == "acme" && tn.Counts[completeness.DroppedInApp] != int64(dropped) {
			t.Errorf("API: acme dropped in app %d, want %d", tn.Counts[completeness.DroppedInApp], dropped)
		}
	}
	if t.Failed() {
		t.Logf("collector log: %s", filepath.Join(c.dir, "collector.log"))
	}
}

// droppingApp is the example app with the Go SDK's default shape shrunk
// (a 16-span queue that drops when full), sending as tenant acme.
type droppingApp struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	log  bytes.Buffer
}

// startDroppingApp starts the example app sending to endpoint, its SDK's
// own metrics every second, and waits until it listens; args are more
// flags.
func startDroppingApp(t *testing.T, endpoint string, args ...string) *droppingApp {
	t.Helper()
	a := &droppingApp{t: t, addr: "127.0.0.1:" + proctest.FreePort(t)}
	a.cmd = exec.Command(proctest.Build(t, "github.com/docketlabs/docket/examples/llmapp"), append([]string{"-listen", a.addr,
		"-otlp-endpoint", endpoint, "-customers", "20", "-span-queue", "16", "-span-batch", "16", "-span-block=false"}, args...)...)
	a.cmd.Env = append(os.Environ(), "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer "+acmeToken, "OTEL_METRIC_EXPORT_INTERVAL=1000")
	a.cmd.Stdout, a.cmd.Stderr = &a.log, &a.log
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.cmd.Process.Kill() })
	waitFor(t, "the app listening", time.Minute, func() bool {
		resp, err := http.Get("http://" + a.addr + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return a
}

// burst sends n questions, 32 at a time: more spans at once than the
// SDK's queue holds.
func (a *droppingApp) burst(n int) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			body := fmt.Sprintf(`{"user":"user%04d@example.com","question":"Where is my order %d?"}`, i%20, i)
			resp, err := http.Post("http://"+a.addr+"/ask", "application/json", bytes.NewBufferString(body))
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
}

// stop stops the app (it exports what it holds, its SDK's counts included)
// and returns the spans its SDK dropped, by the SDK's own count.
func (a *droppingApp) stop() int {
	a.t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		a.t.Fatal(err)
	}
	if err := a.cmd.Wait(); err != nil {
		a.t.Fatalf("app: %v\n%s", err, a.log.String())
	}
	m := sdkDropped.FindStringSubmatch(a.log.String())
	if m == nil {
		a.t.Fatalf("the app logged no drop count:\n%s", a.log.String())
	}
	dropped, _ := strconv.Atoi(m[1])
	if dropped == 0 {
		a.t.Fatalf("the SDK dropped nothing; the test needs a loss to count:\n%s", a.log.String())
	}
	return dropped
}
