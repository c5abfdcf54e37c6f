package collector_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/storage/clickhouse"
	"github.com/docketlabs/docket/ledger/storage/clickhouse/clickhousetest"
)

// startSharedLedger serves one ledger over ClickHouse's HTTP interface for
// the gateways, and returns its DSN. No ClickHouse server runs here: the
// server is the project's test front (clickhousetest) over the embedded
// engine, ClickHouse 26.7 in chDB, in a child process of this test binary
// (chDB allows one data directory per process). The gateways reach it as
// they would a server: through the server adapter (ledger/storage/
// clickhouse), over HTTP.
func startSharedLedger(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperSharedLedger$")
	cmd.Env = append(os.Environ(), "E2E_SHARED_LEDGER="+dir)
	return clickhousetest.StartChild(t, cmd)
}

// TestHelperSharedLedger is the child process of startSharedLedger.
func TestHelperSharedLedger(t *testing.T) {
	dir := os.Getenv("E2E_SHARED_LEDGER")
	if dir == "" {
		t.Skip("runs only as the shared ledger of TestGatewaysShareOneServer")
	}
	if err := clickhousetest.ServeChild(filepath.Join(dir, "ledger")); err != nil {
		t.Fatal(err)
	}
}

// TestGatewaysShareOneServer runs deploy/gateway.yaml twice on one ledger
// reached through the server adapter, as gateways share a ClickHouse
// server, instead of an embedded ledger each. Every trace is sent to both
// agents, each routing to its own gateway, so every call reaches the
// ledger twice, from two processes (duplicate delivery at its worst): the
// ledger must hold each call exactly once, with no conflict. The gateways'
// lifecycle extensions (cycles every 2 s here) take turns by the lease:
// never both at once (no two expiry runs overlap in time), and when the
// holder stops, the other takes the lease and runs the cycles.
func TestGatewaysShareOneServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	f := newFleet(t)
	dsn := startSharedLedger(t, f.dir)
	f.ledgerStorage = fmt.Sprintf("{clickhouse: {dsn: %q}}", dsn)
	shipped, err := os.ReadFile("../deploy/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const hourly = "    interval: 1h\n"
	if !strings.Contains(string(shipped), hourly) {
		t.Fatalf("deploy/gateway.yaml has no %q", hourly)
	}
	config := filepath.Join(f.dir, "gateway.yaml")
	often := "    interval: 2s\n    lease: {ttl: 10s, renew_interval: 2s}\n"
	if err = os.WriteFile(config, []byte(strings.Replace(string(shipped), hourly, often, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	gw := []*fleetProc{f.addGateway(config), f.addGateway(config)}
	f.addAgent(gw[0])
	f.addAgent(gw[1])
	f.startAll()

	const rounds, perRound = 20, 10
	const traces = rounds * perRound
	calls := traces * (fleetTraceSpans - 1)
	s := f.sender()
	for r := range rounds {
		for _, td := range fleetHalves(r*perRound, perRound) {
			for a := range f.agents {
				if err := s.send(a, td); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	f.waitAgentsDrained(90 * time.Second)
	var written [2]float64
	for g, p := range gw {
		if written[g] = metric(t, p.mURL, "otelcol_exporter_ledger_calls_written"); written[g] != float64(calls) {
			t.Errorf("gateway %d wrote %.0f calls, want all %d: the duplicate delivery did not happen", g, written[g], calls)
		}
	}

	ctx := context.Background()
	eng, err := clickhouse.Open(ctx, dsn, clickhouse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	counts, err := ledgerstore.New(eng).CountCalls(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if counts.Calls != uint64(calls) || counts.Spans != uint64(calls) || counts.Conflicts != 0 {
		t.Errorf("the shared ledger: %+v; want %d calls and spans, no conflict", counts, calls)
	}
	distinct := queryInt(t, eng, "SELECT toInt64(uniqExact(tenant, trace_id, span_id)) AS n FROM llm_calls")
	if distinct != int64(calls) {
		t.Errorf("%d distinct call keys stored, want %d", distinct, calls)
	}

	// The lease: one holder at a time, and its cycles; then the other's.
	holder := -1
	waitFor(t, "one gateway holding the lifecycle lease", 30*time.Second, func() bool {
		held := 0
		for g, p := range gw {
			if metric(t, p.mURL, "otelcol_extension_lifecycle_lease_held") == 1 {
				held++
				holder = g
			}
		}
		if held > 1 {
			t.Fatal("both gateways hold the lifecycle lease")
		}
		return held == 1
	})
	other := 1 - holder
	waitFor(t, "the holder's lifecycle cycles", 60*time.Second, func() bool { return cycles(t, gw[holder]) >= 2 })
	ranBoth := [2]int{cycles(t, gw[0]), cycles(t, gw[1])}
	gw[holder].stop(syscall.SIGTERM) // releases the lease
	waitFor(t, "the other gateway taking the lease over", 30*time.Second, func() bool {
		return metric(t, gw[other].mURL, "otelcol_extension_lifecycle_lease_held") == 1
	})
	waitFor(t, "the other gateway's lifecycle cycles", 60*time.Second, func() bool { return cycles(t, gw[other]) > ranBoth[other] })
	gw[other].stop(syscall.SIGTERM)
	runs := queryInt(t, eng, "SELECT toInt64(uniqExact(run_id)) AS n FROM expiry_runs")
	// Each run is rows from its start to its end (done, or failed when
	// its lease was lost); ordered by start, none may start before the
	// one before it ended.
	overlapping := queryInt(t, eng, `SELECT toInt64(countIf(start < prev_end)) AS n FROM (
		SELECT start, lagInFrame(end) OVER (ORDER BY start ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS prev_end
		FROM (SELECT run_id, min(at) AS start, max(at) AS end FROM expiry_runs GROUP BY run_id))`)
	if overlapping != 0 || runs < 3 {
		t.Errorf("%d expiry runs, %d of them started before the one before had ended", runs, overlapping)
	}
	t.Logf("shared ledger over the server adapter (the test front over the embedded engine): %d calls sent to both gateways; written by gateway 0 and 1: %.0f and %.0f; "+
		"in the ledger: %d calls, %d spans, %d physical rows, %d conflicts", calls, written[0], written[1],
		counts.Calls, counts.Spans, counts.StoredRows, counts.Conflicts)
	t.Logf("lifecycle: while both ran, gateway %d (holder) ran %d cycles and gateway %d ran %d; after the holder stopped, gateway %d ran %d in all; %d expiry runs, none overlapping",
		holder, ranBoth[holder], other, ranBoth[other], other, cycles(t, gw[other]), runs)
}

// cycles counts the lifecycle cycles in a gateway's log (each ends in an
// expiry run).
func cycles(t *testing.T, p *fleetProc) int {
	t.Helper()
	b, err := os.ReadFile(p.log.Name())
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "expiry run done")
}

func queryInt(t *testing.T, eng storage.Engine, q string) int64 {
	t.Helper()
	var r struct{ N int64 }
	if err := eng.QueryJSON(context.Background(), q, func(row []byte) error { return json.Unmarshal(row, &r) }); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r.N
}
