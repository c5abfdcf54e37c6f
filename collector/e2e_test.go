package collector_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// built is the docket command, built once for every test of the package:
// linking it takes half a minute on a loaded machine.
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// docketBinary returns the docket command, building it on first use.
func docketBinary(t *testing.T) string {
	shorttest.Needs(t, shorttest.ChDB)
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "docket-e2e-"); built.err == nil {
			built.path, built.err = proctest.BuildIn(built.dir, "github.com/docketlabs/docket/cmd/docket")
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		_ = os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// collectorProc is a docket collector subprocess on test ports.
type collectorProc struct {
	t        *testing.T
	bin, dir string
	config   string
	env      []string
	otlpURL  string
	apiURL   string
	cmd      *exec.Cmd
	log      *os.File
}

// newCollectorProc prepares a collector running testdata/config; the config
// reads its data directory and ports from E2E_* variables, and extraEnv adds
// more.
func newCollectorProc(t *testing.T, bin, config string, extraEnv ...string) *collectorProc {
	dir := t.TempDir()
	otlp, api := proctest.FreePort(t), proctest.FreePort(t)
	log, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return &collectorProc{
		t: t, bin: bin, dir: dir, log: log, config: config,
		env:     append(append(os.Environ(), "E2E_DATA="+dir, "E2E_OTLP_PORT="+otlp, "E2E_API_PORT="+api), extraEnv...),
		otlpURL: "http://127.0.0.1:" + otlp + "/v1/traces",
		apiURL:  "http://127.0.0.1:" + api,
	}
}

func (p *collectorProc) start() {
	p.t.Helper()
	cfg, _ := filepath.Abs(filepath.Join("testdata", p.config))
	p.cmd = exec.Command(p.bin, "collector", "--config", "file:"+cfg)
	p.cmd.Env = p.env
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.t.Cleanup(func() { p.signal(syscall.SIGKILL) })
}

func (p *collectorProc) signal(sig syscall.Signal) {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	_ = p.cmd.Wait()
	p.cmd = nil
}

func (p *collectorProc) stats() (ledgerstore.Counts, error) {
	var c ledgerstore.Counts
	err := p.get("/api/v1/ledger/stats", &c)
	return c, err
}

// get reads a UI API path as the proxy-authenticated operator.
func (p *collectorProc) get(path string, out any) error {
	req, err := http.NewRequest(http.MethodGet, p.apiURL+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Forwarded-User", "e2e")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", path, resp.Status)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// waitCalls polls until the ledger holds want calls, then checks it stays
// there (no late duplicates) and holds conflicts conflicting rows (none
// unless given: a redelivery is no conflict).
func (p *collectorProc) waitCalls(want uint64, timeout time.Duration, conflicts ...uint64) {
	p.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if c, err := p.stats(); err == nil && c.Calls >= want && c.Conflicts >= sum(conflicts) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(time.Second)
	c, err := p.stats()
	if err != nil || c.Calls != want || c.DistinctCalls != want || c.Conflicts != sum(conflicts) {
		p.t.Fatalf("ledger holds %+v (err %v); want exactly %d calls and %d conflicts\nlog: %s", c, err, want, sum(conflicts), p.dir)
	}
	p.t.Logf("ledger: %d calls, %d distinct, %d physical rows (redelivered rows collapse on merge), %d conflicts", c.Calls, c.DistinctCalls, c.StoredRows, c.Conflicts)
}

// waitIdle waits until the ledger holds want calls and the write that
// stored the last of them has had a second to finish its follow-up work.
func (p *collectorProc) waitIdle(want uint64, timeout time.Duration) {
	p.t.Helper()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if c, err := p.stats(); err == nil && c.Calls >= want {
			time.Sleep(time.Second)
			return
		}
	}
	p.t.Fatalf("the ledger did not reach %d calls in %s", want, timeout)
}

func sum(ns []uint64) uint64 {
	var s uint64
	for _, n := range ns {
		s += n
	}
	return s
}

// callBatches makes n LLM call spans in batches of random size, with the
// inputs the ledger must survive: missing usage, unknown models, invalid
// UTF-8, NUL bytes and one 10 MB attribute.
func callBatches(n int, rng *rand.Rand) []ptrace.Traces {
	var out []ptrace.Traces
	for i := 0; i < n; {
		size := 1 + rng.IntN(400)
		if i == n/2 {
			size = 1 // the 10 MB span travels alone
		}
		td, spans := spantest.Traces(map[string]any{conventions.ServiceName: "e2e"})
		for j := 0; j < size && i < n; j, i = j+1, i+1 {
			a := appendCall(spans, i)
			if i == n/2 {
				a.PutStr(conventions.RequestPrefix+"huge", strings.Repeat("x", 10<<20))
			}
		}
		out = append(out, td)
	}
	return out
}

// appendCall appends LLM call span number i (unique IDs) and returns its
// attributes.
func appendCall(spans ptrace.SpanSlice, i int) pcommon.Map {
	s := spantest.Chat(spans, "openai", "gpt-4o-mini")
	var tid [16]byte
	copy(tid[:], fmt.Sprintf("%016x", i))
	spantest.At(s, pcommon.TraceID(tid), pcommon.SpanID{0xaa, byte(i >> 16), byte(i >> 8), byte(i), 1, 2, 3, 4}, time.Now())
	model, id := "gpt-4o-mini-2024-07-18", fmt.Sprintf("chatcmpl-%d", i)
	if i%10 == 2 {
		model = "model-nobody-prices"
	}
	if i%97 == 0 {
		id = "bad\xff\xfe-utf8\x00nul"
	}
	spantest.Response(s, model, id)
	if i%10 != 1 { // else usage missing
		spantest.Usage(s, int64(100+i%50), int64(20+i%7))
	}
	return s.Attributes()
}

// send posts a batch until the collector accepts it; a batch the collector
// died while receiving is sent again, as an SDK's retry would.
func send(t *testing.T, url string, td ptrace.Traces) {
	t.Helper()
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	sendBody(t, url, body)
}

func sendBody(t *testing.T, url string, body []byte) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			if resp.StatusCode == http.StatusBadRequest {
				t.Fatalf("collector rejected a batch: %s", resp.Status)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector did not accept a batch within 2m: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestLedgerKeepsEveryCallAcrossKills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	const calls = 10000
	p := newCollectorProc(t, docketBinary(t), "ledger-e2e.yaml")
	p.start()
	batches := callBatches(calls, newRand())
	kills := map[int]bool{len(batches) / 4: true, len(batches) / 2: true, 3 * len(batches) / 4: true}
	for i, td := range batches {
		if kills[i] {
			// Kill between acceptance and insert: accepted batches sit in
			// the persistent queue, and this batch's send races the kill.
			done := make(chan struct{})
			go func() { send(t, p.otlpURL, td); close(done) }()
			time.Sleep(time.Duration(rand.IntN(30)) * time.Millisecond)
			p.signal(syscall.SIGKILL)
			p.start()
			<-done
			continue
		}
		send(t, p.otlpURL, td)
	}
	p.waitCalls(calls, 3*time.Minute)
}

func newRand() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
