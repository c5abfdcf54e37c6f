package collector_test

import (
	"bufio"
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/otelcol"

	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage/chdb"
)

// metric reads one unlabeled-or-summed sample from a Prometheus endpoint.
func metric(t *testing.T, url, name string) float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	sum, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum, found = sum+v, true
		}
	}
	if !found {
		return -1
	}
	return sum
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// The ledger's storage goes away for a while (its table is detached inside
// the running engine): calls wait in the persistent queue, the wait is
// visible in metrics, and every call is written once storage returns.
func TestLedgerWaitsForStorage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the collector")
	}
	dir := t.TempDir()
	otlp, api, metricsPort := proctest.FreePort(t), proctest.FreePort(t), proctest.FreePort(t)
	t.Setenv("E2E_DATA", dir)
	t.Setenv("E2E_OTLP_PORT", otlp)
	t.Setenv("E2E_API_PORT", api)
	t.Setenv("E2E_METRICS_PORT", metricsPort)
	col := startInProcess(t, "ledger-outage.yaml")
	waitFor(t, "collector running", time.Minute, func() bool { return col.GetState() == otelcol.StateRunning })

	// The same process shares the embedded engine with the exporter.
	eng, err := chdb.Open(filepath.Join(dir, "ledger"))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	store := ledgerstore.New(eng)
	count := func() uint64 {
		c, err := store.CountCalls(context.Background())
		if err != nil {
			return 0
		}
		return c.Calls
	}
	otlpURL := "http://127.0.0.1:" + otlp + "/v1/traces"
	metricsURL := "http://127.0.0.1:" + metricsPort + "/metrics"
	batches := callBatches(5000, newRand())
	half := len(batches) / 2
	sent := 0
	for _, td := range batches[:half] {
		send(t, otlpURL, td)
		sent += td.SpanCount()
	}
	waitFor(t, "first half stored", time.Minute, func() bool { return count() == uint64(sent) })

	ctx := context.Background()
	if err := eng.Exec(ctx, "DETACH TABLE llm_calls"); err != nil {
		t.Fatal(err)
	}
	for _, td := range batches[half:] {
		send(t, otlpURL, td)
	}
	defer func() {
		if t.Failed() {
			resp, err := http.Get(metricsURL)
			if err == nil {
				sc := bufio.NewScanner(resp.Body)
				for sc.Scan() {
					if strings.Contains(sc.Text(), "ledger") || strings.Contains(sc.Text(), "queue") {
						t.Log(sc.Text())
					}
				}
				resp.Body.Close()
			}
		}
	}()
	waitFor(t, "write failures and a non-empty queue in metrics", time.Minute, func() bool {
		return metric(t, metricsURL, "otelcol_exporter_ledger_write_failures") > 0 && metric(t, metricsURL, "otelcol_exporter_queue_size") > 0
	})
	t.Logf("during the outage: queue_size=%v write_failures=%v", metric(t, metricsURL, "otelcol_exporter_queue_size"), metric(t, metricsURL, "otelcol_exporter_ledger_write_failures"))
	time.Sleep(2 * time.Second)

	if err := eng.Exec(ctx, "ATTACH TABLE llm_calls"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "all calls stored after storage returned", 3*time.Minute, func() bool { return count() >= 5000 })
	time.Sleep(time.Second)
	c, err := store.CountCalls(ctx)
	if err != nil || c.Calls != 5000 || c.DistinctCalls != 5000 {
		t.Fatalf("after recovery: %+v, %v; want exactly 5000", c, err)
	}
	waitFor(t, "queue drained", time.Minute, func() bool { return metric(t, metricsURL, "otelcol_exporter_queue_size") == 0 })
}
