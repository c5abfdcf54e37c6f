package collector_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/internal/s3test"
)

// The two-layer topology of deploy/agent.yaml and deploy/gateway.yaml on
// loopback: real docket collector processes, TLS everywhere as deployed
// (one test CA, trusted through SSL_CERT_FILE where the configs use the
// system roots), the content store on a real S3 server and an OTLP/gRPC
// trace backend in the test.

// fleetDecisionWait is the gateways' tail-sampling wait: short, so the
// tests settle fast. The gateway-kill test takes the shipped default
// (fleet.decisionWait): there the spans the agents held for the dead
// gateway reach the survivor only after the re-route, and a trace decided
// before its last span arrives reaches the backend in part.
const fleetDecisionWait = "2s"

// fleetProc is one collector of the fleet. With supervise set, it is
// restarted whenever it exits, as an init system would (the canary's hooks
// restart a gateway by stopping it).
type fleetProc struct {
	t                      *testing.T
	name, bin, config, dir string
	env                    []string
	grpcAddr, health, mURL string
	pidFile                string
	log                    *os.File
	supervise              bool
	mu                     sync.Mutex
	cmd                    *exec.Cmd
	exited                 chan struct{}
	stopped                bool
}

func (p *fleetProc) start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = false
	if err := p.startLocked(); err != nil {
		p.t.Fatal(err)
	}
	if p.supervise {
		go p.restartOnExit()
	}
}

func (p *fleetProc) startLocked() error {
	cmd := exec.Command(p.bin, "collector", "--config", "file:"+p.config)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%s: %w", p.name, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.cmd, p.exited = cmd, exited
	return os.WriteFile(p.pidFile, []byte(strconv.Itoa(cmd.Process.Pid)), 0o600)
}

func (p *fleetProc) restartOnExit() {
	for {
		p.mu.Lock()
		exited := p.exited
		p.mu.Unlock()
		<-exited
		p.mu.Lock()
		if p.stopped {
			p.mu.Unlock()
			return
		}
		err := p.startLocked()
		p.mu.Unlock()
		if err != nil {
			p.t.Error(err)
			return
		}
	}
}

// stop signals the process and waits for it; it stays down.
func (p *fleetProc) stop(sig syscall.Signal) {
	p.mu.Lock()
	p.stopped = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	<-exited
}

// waitHealthy waits until health_check answers 200: every component up.
func (p *fleetProc) waitHealthy() {
	p.t.Helper()
	waitFor(p.t, p.name+" healthy (log "+p.log.Name()+")", time.Minute, func() bool {
		resp, err := http.Get(p.health)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// traceBackend is the tracing backend: an OTLP/gRPC server over TLS that
// keeps which spans of which traces arrived, and how often.
type traceBackend struct {
	ptraceotlp.UnimplementedGRPCServer
	addr    string
	mu      sync.Mutex
	spans   map[pcommon.TraceID]map[pcommon.SpanID]int
	content int // spans that still carried GenAI content
}

func startTraceBackend(t *testing.T, cert tls.Certificate) *traceBackend {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &traceBackend{addr: ln.Addr().String(), spans: map[pcommon.TraceID]map[pcommon.SpanID]int{}}
	s := grpc.NewServer(grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})))
	ptraceotlp.RegisterGRPCServer(s, b)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
	return b
}

func (b *traceBackend) Export(_ context.Context, req ptraceotlp.ExportRequest) (ptraceotlp.ExportResponse, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, rs := range req.Traces().ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				if b.spans[s.TraceID()] == nil {
					b.spans[s.TraceID()] = map[pcommon.SpanID]int{}
				}
				b.spans[s.TraceID()][s.SpanID()]++
				if _, ok := s.Attributes().Get(conventions.InputMessages); ok {
					b.content++
				}
			}
		}
	}
	return ptraceotlp.NewExportResponse(), nil
}

func (b *traceBackend) spanCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, spans := range b.spans {
		n += len(spans)
	}
	return n
}

// fleet is agents in front of gateways, with their S3 server, backend and
// certificates.
type fleet struct {
	t                            *testing.T
	bin, dir, caFile, serverCert string
	clientCert                   string
	tokens                       string
	ca                           *testCA
	s3                           *s3test.Server
	backend                      *traceBackend
	gateways, agents             []*fleetProc
	decisionWait                 string
	// ledgerStorage is the gateways' ledgerstorage section; empty gives
	// each gateway an embedded ledger of its own.
	ledgerStorage string
	// gatewayHost is the address the gateways' OTLP receivers listen on
	// and the agents connect to.
	gatewayHost string
}

// fleetAgentName is the name of the agents' client certificate:
// deploy/gateway.yaml's default relay name.
const fleetAgentName = "docket-agent"

// newFleet prepares a fleet whose server certificate is valid for
// 127.0.0.1 and serverIPs.
func newFleet(t *testing.T, serverIPs ...net.IP) *fleet {
	f := &fleet{t: t, bin: docketBinary(t), dir: t.TempDir(), ca: newTestCA(t), decisionWait: fleetDecisionWait, gatewayHost: "127.0.0.1"}
	f.caFile = filepath.Join(f.ca.dir, "ca.crt")
	key, cert := f.ca.issue(&x509.Certificate{Subject: pkix.Name{CommonName: "fleet"}, IPAddresses: append([]net.IP{net.IPv4(127, 0, 0, 1)}, serverIPs...),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	f.serverCert = f.ca.write("server.crt", cert, key)
	ckey, ccert := f.ca.issue(&x509.Certificate{Subject: pkix.Name{CommonName: fleetAgentName}, DNSNames: []string{fleetAgentName},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	f.clientCert = f.ca.write("agent.crt", ccert, ckey)
	pair, err := tls.LoadX509KeyPair(f.serverCert, f.serverCert+".key")
	if err != nil {
		t.Fatal(err)
	}
	f.tokens = filepath.Join(f.dir, "ingest-tokens")
	if err := os.WriteFile(f.tokens, []byte("acme "+sha256Hex(acmeToken)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.s3 = s3test.StartTLS(t, f.serverCert, f.serverCert+".key")
	f.backend = startTraceBackend(t, pair)
	return f
}

func (f *fleet) proc(name, config string, env ...string) *fleetProc {
	dir := filepath.Join(f.dir, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		f.t.Fatal(err)
	}
	log, err := os.Create(filepath.Join(dir, "collector.log"))
	if err != nil {
		f.t.Fatal(err)
	}
	health, metrics, grpcPort := proctest.FreePort(f.t), proctest.FreePort(f.t), proctest.FreePort(f.t)
	p := &fleetProc{
		t: f.t, name: name, bin: f.bin, config: config, dir: dir, log: log,
		grpcAddr: "127.0.0.1:" + grpcPort,
		health:   "http://127.0.0.1:" + health + "/", mURL: "http://127.0.0.1:" + metrics + "/metrics",
		pidFile: filepath.Join(dir, "pid"),
		env: append([]string{
			"SSL_CERT_FILE=" + f.caFile,
			"DOCKET_HEALTH_ENDPOINT=127.0.0.1:" + health,
			"DOCKET_METRICS_HOST=127.0.0.1", "DOCKET_METRICS_PORT=" + metrics,
		}, env...),
	}
	f.t.Cleanup(func() {
		p.stop(syscall.SIGKILL)
		log.Close()
		if f.t.Failed() {
			if b, err := os.ReadFile(log.Name()); err == nil {
				f.t.Logf("%s log:\n%s", name, b[max(0, len(b)-4000):])
			}
		}
	})
	return p
}

// addGateway prepares a gateway on deploy/gateway.yaml (or config) with
// its own embedded ledger, or the fleet's ledgerStorage.
func (f *fleet) addGateway(config string) *fleetProc {
	name := fmt.Sprintf("gateway-%d", len(f.gateways))
	p := f.proc(name, config)
	storage := f.ledgerStorage
	if storage == "" {
		storage = embeddedLedger(filepath.Join(f.dir, name, "ledger"))
	}
	_, port, _ := net.SplitHostPort(p.grpcAddr)
	p.grpcAddr = net.JoinHostPort(f.gatewayHost, port)
	p.env = append(append(p.env, f.contentEnv()...),
		"DOCKET_LEDGER_STORAGE="+storage,
		"DOCKET_GATEWAY_ENDPOINT="+p.grpcAddr,
		"DOCKET_GATEWAY_CERT="+f.serverCert, "DOCKET_GATEWAY_KEY="+f.serverCert+".key",
		"DOCKET_AGENT_CA="+f.caFile,
		"DOCKET_TRACES_BACKEND="+f.backend.addr,
		"DOCKET_DECISION_WAIT="+f.decisionWait,
	)
	f.gateways = append(f.gateways, p)
	return p
}

// contentEnv is the content store of agents and gateways (the gateways'
// lifecycle deletes and holds its objects).
func (f *fleet) contentEnv() []string {
	return []string{"DOCKET_S3_ENDPOINT=" + f.s3.Endpoint, "DOCKET_S3_ACCESS_KEY=" + f.s3.AccessKey, "DOCKET_S3_SECRET_KEY=" + f.s3.SecretKey,
		"DOCKET_CONTENT_SECRET=" + strings.Repeat("c", 32)}
}

// addAgent prepares an agent on deploy/agent.yaml routing to gateways.
func (f *fleet) addAgent(gateways ...*fleetProc) *fleetProc {
	return f.addAgentOn("../deploy/agent.yaml", gateways...)
}

// addAgentOn prepares an agent on config routing to gateways.
func (f *fleet) addAgentOn(config string, gateways ...*fleetProc) *fleetProc {
	p := f.proc(fmt.Sprintf("agent-%d", len(f.agents)), config)
	p.env = append(append(p.env, f.contentEnv()...),
		"DOCKET_OTLP_GRPC_ENDPOINT="+p.grpcAddr, "DOCKET_OTLP_HTTP_ENDPOINT=127.0.0.1:"+proctest.FreePort(f.t),
		"DOCKET_OTLP_CERT="+f.serverCert, "DOCKET_OTLP_KEY="+f.serverCert+".key",
		"DOCKET_INGEST_TOKENS="+f.tokens,
		"DOCKET_GATEWAY_CA="+f.caFile, "DOCKET_AGENT_CERT="+f.clientCert, "DOCKET_AGENT_KEY="+f.clientCert+".key",
		"DOCKET_DATA="+p.dir,
	)
	p.setGateways(gateways...)
	f.agents = append(f.agents, p)
	return p
}

// setGateways sets the agent's static gateway list (applied at its next
// start).
func (p *fleetProc) setGateways(gateways ...*fleetProc) {
	addrs := make([]string, len(gateways))
	for i, g := range gateways {
		addrs[i] = g.grpcAddr
	}
	p.env = append(p.env, "DOCKET_GATEWAYS=["+strings.Join(addrs, ", ")+"]")
}

// sender sends to the agents over OTLP/gRPC with TLS and acme's token.
type sender struct {
	t     *testing.T
	conns []*grpc.ClientConn
}

// startAll starts every gateway and agent, then waits until each is healthy.
func (f *fleet) startAll() {
	procs := append(f.gateways, f.agents...)
	for _, p := range procs {
		p.start()
	}
	for _, p := range procs {
		p.waitHealthy()
	}
}

func (f *fleet) sender() *sender {
	s := &sender{t: f.t}
	for _, a := range f.agents {
		conn, err := grpc.NewClient(a.grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(f.ca.client())))
		if err != nil {
			f.t.Fatal(err)
		}
		f.t.Cleanup(func() { conn.Close() })
		s.conns = append(s.conns, conn)
	}
	return s
}

// send exports td through agent i, retrying as an SDK would until the
// agent accepts it.
func (s *sender) send(i int, td ptrace.Traces) error {
	client := ptraceotlp.NewGRPCClient(s.conns[i])
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+acmeToken)
		_, err := client.Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("agent %d did not accept a batch within 1m: %w", i, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Every trace of the fleet test: an HTTP server span and two LLM calls
// under it, one in each half. The halves go through different agents, as
// spans of one trace do when its services run on different nodes.
const fleetTraceSpans = 3

func fleetTraceID(i int) pcommon.TraceID {
	return pcommon.TraceID{0xf1, 0xee, 0x7e, byte(i * 37), 0, 0, 0, 0, 0, 0, 0, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}

func fleetSpanID(i, j int) pcommon.SpanID {
	return pcommon.SpanID{0x5e, byte(j), 0, 0, byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}

// fleetError is whether trace i ends in an error: the gateways' errors
// policy keeps every such trace for the backend.
func fleetError(i int) bool { return i%5 == 0 }

// fleetHalves returns traces first..first+n-1, the half for each agent.
func fleetHalves(first, n int) [2]ptrace.Traces {
	var out [2]ptrace.Traces
	spans := [2]ptrace.SpanSlice{}
	for h := range out {
		out[h] = ptrace.NewTraces()
		rs := out[h].ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(conventions.ServiceName, fmt.Sprintf("fleet-svc-%d", h))
		spans[h] = rs.ScopeSpans().AppendEmpty().Spans()
	}
	now := time.Now()
	for i := first; i < first+n; i++ {
		root := spans[0].AppendEmpty()
		root.SetTraceID(fleetTraceID(i))
		root.SetSpanID(fleetSpanID(i, 0))
		root.SetKind(ptrace.SpanKindServer)
		root.SetName("POST /chat")
		root.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-2 * time.Second)))
		root.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
		root.Attributes().PutStr(conventions.HTTPRequestMethod, "POST")
		root.Attributes().PutStr(conventions.HTTPRoute, "/chat")
		if fleetError(i) {
			root.Status().SetCode(ptrace.StatusCodeError)
			root.Attributes().PutInt(conventions.HTTPResponseStatusCode, 500)
		} else {
			root.Attributes().PutInt(conventions.HTTPResponseStatusCode, 200)
		}
		for j := 1; j < fleetTraceSpans; j++ {
			s := spans[j-1].AppendEmpty()
			s.SetTraceID(fleetTraceID(i))
			s.SetSpanID(fleetSpanID(i, j))
			s.SetParentSpanID(fleetSpanID(i, 0))
			s.SetKind(ptrace.SpanKindClient)
			s.SetName("chat gpt-4o-mini")
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
			a := s.Attributes()
			a.PutStr(conventions.OperationName, "chat")
			a.PutStr(conventions.ProviderName, "openai")
			a.PutStr(conventions.RequestModel, "gpt-4o-mini")
			a.PutStr(conventions.ResponseID, fmt.Sprintf("chatcmpl-fleet-%d-%d", i, j))
			a.PutInt(conventions.UsageInput, int64(100+i%50))
			a.PutInt(conventions.UsageOutput, int64(20+j))
			a.PutStr(conventions.InputMessages, messagesJSON("user", fmt.Sprintf("fleet question %d/%d", i, j)))
		}
	}
	return out
}

// sendRounds sends traces first..first+rounds*perRound-1, perRound traces
// a round, each half through its agent.
func (s *sender) sendRounds(first, rounds, perRound int, between func(round int)) {
	s.t.Helper()
	for r := range rounds {
		if between != nil {
			between(r)
		}
		halves := fleetHalves(first+r*perRound, perRound)
		for h, td := range halves {
			if err := s.send(h, td); err != nil {
				s.t.Fatal(err)
			}
		}
	}
}

// fleetUnion is what the gateways' ledgers hold together, keyed by call
// identity (tenant, trace ID, span ID): the key of llm_calls, under which
// one shared ClickHouse keeps one row per call.
type fleetUnion struct {
	rows     int                     // physical llm_calls rows in all ledgers
	byKey    map[string]map[int]bool // call key → gateways holding it
	perGW    []int                   // distinct calls per gateway
	physical []int                   // physical rows per gateway
}

func callKey(tenant, traceID, spanID string) string { return tenant + "/" + traceID + "/" + spanID }

func unionLedgers(t *testing.T, gateways []*fleetProc) fleetUnion {
	u := fleetUnion{byKey: map[string]map[int]bool{}}
	for g, gw := range gateways {
		distinct := map[string]bool{}
		phys := 0
		for _, r := range dumpLedger(t, filepath.Join(gw.dir, "ledger")) {
			if r.table != "llm_calls" {
				continue
			}
			var row struct {
				Tenant  string `json:"tenant"`
				TraceID string `json:"trace_id"`
				SpanID  string `json:"span_id"`
			}
			if err := json.Unmarshal(r.raw, &row); err != nil {
				t.Fatal(err)
			}
			k := callKey(row.Tenant, row.TraceID, row.SpanID)
			if u.byKey[k] == nil {
				u.byKey[k] = map[int]bool{}
			}
			u.byKey[k][g] = true
			distinct[k] = true
			phys++
		}
		u.rows += phys
		u.perGW = append(u.perGW, len(distinct))
		u.physical = append(u.physical, phys)
	}
	return u
}

// check compares the union with traces 0..traces-1 of acme: every call
// present, nothing else. It returns the calls held by more than one
// gateway.
func (u fleetUnion) check(t *testing.T, traces int) (duplicates int) {
	t.Helper()
	want := map[string]bool{}
	for i := range traces {
		for j := 1; j < fleetTraceSpans; j++ {
			want[callKey("acme", fleetTraceID(i).String(), fleetSpanID(i, j).String())] = true
		}
	}
	missing := 0
	for k := range want {
		if u.byKey[k] == nil {
			missing++
		}
	}
	for k, gws := range u.byKey {
		if !want[k] {
			t.Errorf("the ledgers hold a call nobody sent: %s", k)
		}
		if len(gws) > 1 {
			duplicates++
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d calls are in no gateway's ledger", missing, len(want))
	}
	return duplicates
}

// gatewaysOf says which gateways stored calls of trace i.
func (u fleetUnion) gatewaysOf(i int) map[int]bool {
	out := map[int]bool{}
	for j := 1; j < fleetTraceSpans; j++ {
		for g := range u.byKey[callKey("acme", fleetTraceID(i).String(), fleetSpanID(i, j).String())] {
			out[g] = true
		}
	}
	return out
}

// queued is the spans waiting in an agent's persistent queue (-1: no
// answer).
func (p *fleetProc) queued() float64 { return metric(p.t, p.mURL, "otelcol_exporter_queue_size") }

func (f *fleet) waitAgentsDrained(timeout time.Duration) {
	f.t.Helper()
	waitFor(f.t, "the agents' queues to drain", timeout, func() bool {
		for _, a := range f.agents {
			if a.queued() != 0 {
				return false
			}
		}
		return true
	})
}

// waitBackendSettled waits until the backend received nothing new for a
// few decision waits.
func (f *fleet) waitBackendSettled() {
	wait, _ := time.ParseDuration(f.decisionWait)
	last, since := -1, time.Now()
	for time.Since(since) < 3*wait {
		if n := f.backend.spanCount(); n != last {
			last, since = n, time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestFleetLosesNothingWhenAGatewayDies runs two agents in front of two
// gateways, kills one gateway (SIGKILL) mid-run and, once the agents'
// static gateway list names only the survivor (a restart of the agents,
// as a rollout does), checks that the two ledgers together hold every call
// and that the traces the survivor handled reached the backend complete.
func TestFleetLosesNothingWhenAGatewayDies(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	f := newFleet(t)
	f.decisionWait = "10s"
	gwA, gwB := f.addGateway("../deploy/gateway.yaml"), f.addGateway("../deploy/gateway.yaml")
	for range 2 {
		f.addAgent(gwA, gwB)
	}
	f.startAll()

	const rounds, perRound = 60, 10
	const traces = rounds * perRound
	s := f.sender()
	s.sendRounds(0, rounds, perRound, func(r int) {
		if r == rounds/2 {
			// Mid-run, while the agents are exporting to it.
			gwA.stop(syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	})
	// What was routed to the dead gateway waits in the agents' disk queues:
	// a static ring keeps naming it, and retries never give up.
	var held float64
	waitFor(t, "calls for the dead gateway held in the agents' queues", 30*time.Second, func() bool {
		held = 0
		for _, a := range f.agents {
			held += max(0, a.queued())
		}
		return held > 0
	})
	// Re-route: the agents restart with the survivor as the only gateway
	// and replay their queues to it.
	for _, a := range f.agents {
		a.stop(syscall.SIGTERM)
		a.setGateways(gwB)
		a.start()
	}
	f.waitAgentsDrained(90 * time.Second)
	f.waitBackendSettled()
	for _, p := range append(f.agents, gwB) {
		p.stop(syscall.SIGTERM)
	}

	u := unionLedgers(t, f.gateways)
	dups := u.check(t, traces)
	calls := traces * (fleetTraceSpans - 1)

	// The backend: traces the killed gateway never touched, sampled or
	// not, arrive whole; every error trace among them arrives.
	var inBackend, complete, errorsB, errorsBComplete, touchedA, partialTouchedA, dupSpans int
	f.backend.mu.Lock()
	for i := range traces {
		got := f.backend.spans[fleetTraceID(i)]
		gws := u.gatewaysOf(i)
		onlyB := !gws[0]
		if gws[0] {
			touchedA++
		}
		for _, n := range got {
			dupSpans += n - 1
		}
		if onlyB && fleetError(i) {
			errorsB++
			if len(got) == fleetTraceSpans {
				errorsBComplete++
			}
		}
		if len(got) == 0 {
			continue
		}
		inBackend++
		if len(got) == fleetTraceSpans {
			complete++
			continue
		}
		if onlyB {
			t.Errorf("trace %d, handled by the survivor only, reached the backend with %d of %d spans", i, len(got), fleetTraceSpans)
		} else {
			partialTouchedA++
		}
	}
	content := f.backend.content
	f.backend.mu.Unlock()
	if errorsB == 0 || touchedA == 0 {
		t.Fatalf("the ring sent %d traces to the killed gateway and %d error traces to the survivor: the test checked nothing", touchedA, errorsB)
	}
	if errorsBComplete != errorsB {
		t.Errorf("%d of %d error traces handled by the survivor reached the backend complete", errorsBComplete, errorsB)
	}
	if content > 0 {
		t.Errorf("%d spans reached the backend with GenAI content", content)
	}
	t.Logf("fleet: 2 agents, 2 gateways; gateway 0 killed (SIGKILL) after round %d of %d; %.0f spans then held in the agents' queues; agents restarted naming gateway 1 only",
		rounds/2, rounds, held)
	t.Logf("calls sent %d; ledger rows: union %d physical (gateway 0: %d, gateway 1: %d), distinct calls %d (gateway 0: %d, gateway 1: %d); calls in both ledgers (stored by the killed gateway, replayed to the survivor): %d",
		calls, u.rows, u.physical[0], u.physical[1], len(u.byKey), u.perGW[0], u.perGW[1], dups)
	t.Logf("traces sent %d (%d error); in the backend %d, complete %d; partial %d, all touched by the killed gateway (%d traces did); error traces handled by the survivor alone: %d of %d complete; spans received more than once: %d",
		traces, traces/5, inBackend, complete, partialTouchedA, touchedA, errorsBComplete, errorsB, dupSpans)
}

// TestCanaryRollout runs deploy/canary/canary.sh against a loopback fleet
// under steady traffic: gateway 0 is the canary, restarted by an init
// system (the test) whenever it exits. A harmless config change proceeds;
// a config that validates but cannot write the ledger is rolled back, and
// the fleet loses no call through either.
func TestCanaryRollout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	f := newFleet(t)
	shipped, err := os.ReadFile("../deploy/gateway.yaml")
	if err != nil {
		t.Fatal(err)
	}
	canaryCfg := filepath.Join(f.dir, "canary-gateway.yaml")
	if err := os.WriteFile(canaryCfg, shipped, 0o600); err != nil {
		t.Fatal(err)
	}
	canary := f.addGateway(canaryCfg)
	canary.supervise = true
	other := f.addGateway("../deploy/gateway.yaml")
	for range 2 {
		f.addAgent(canary, other)
	}
	f.startAll()

	// Steady traffic until the end.
	s := f.sender()
	stop, sent := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		defer func() { sent <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for h, td := range fleetHalves(n, 5) {
				if err := s.send(h, td); err != nil {
					t.Error(err)
					return
				}
			}
			n += 5
		}
	}()

	candidate := func(name, from, to string) string {
		if !strings.Contains(string(shipped), from) {
			t.Fatalf("deploy/gateway.yaml has no %q", from)
		}
		path := filepath.Join(f.dir, name)
		if err := os.WriteFile(path, []byte(strings.Replace(string(shipped), from, to, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	proceeded := filepath.Join(f.dir, "proceeded")
	restart := fmt.Sprintf(`pid=$(cat %[1]q); kill -TERM "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done`, canary.pidFile)
	run := func(config string) (int, string) {
		cmd := exec.Command("bash", "../deploy/canary/canary.sh", config)
		cmd.Env = append(append(os.Environ(), canary.env...),
			"DOCKET_BIN="+f.bin,
			"CANARY_APPLY="+fmt.Sprintf(`cp "$1" %q && %s`, canaryCfg, restart),
			"CANARY_ROLLBACK="+fmt.Sprintf(`cp %q %q && %s`, "../deploy/gateway.yaml", canaryCfg, restart),
			"CANARY_PROCEED="+fmt.Sprintf(`echo "$1" > %q`, proceeded),
			"CANARY_METRICS="+canary.mURL, "OTHERS_METRICS="+other.mURL,
			"CANARY_SOAK=5", "CANARY_SETTLE=2")
		out, err := cmd.CombinedOutput()
		code := 0
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		t.Logf("canary.sh %s: exit %d\n%s", filepath.Base(config), code, out)
		return code, string(out)
	}

	good := candidate("good.yaml", "sampling_percentage: 10", "sampling_percentage: 20")
	if code, out := run(good); code != 0 || !strings.Contains(out, "canary: proceed") {
		t.Errorf("a harmless change did not proceed (exit %d)", code)
	}
	if b, err := os.ReadFile(proceeded); err != nil || strings.TrimSpace(string(b)) != good {
		t.Errorf("the proceed command did not get the new config: %q %v", b, err)
	}
	if err := os.Remove(proceeded); err != nil {
		t.Fatal(err)
	}

	unreachable := fmt.Sprintf("ledgerstorage: {clickhouse: {dsn: 'http://127.0.0.1:%s/docket', allow_unauthenticated: true}}", proctest.FreePort(t))
	bad := candidate("bad.yaml", "ledgerstorage: ${env:DOCKET_LEDGER_STORAGE}", unreachable)
	// A gateway answers only once the ledger holds a batch, so a ledger it
	// cannot write shows as refused spans (error rate) or, while its
	// requests hang until the agents' deadline, as no traffic.
	if code, out := run(bad); code != 1 || !strings.Contains(out, "canary: roll back: ") {
		t.Errorf("a config that cannot write the ledger was not rolled back (exit %d)", code)
	}
	if _, err := os.Stat(proceeded); err == nil {
		t.Error("the bad config was rolled out to the other gateways")
	}
	if b, err := os.ReadFile(canaryCfg); err != nil || string(b) != string(shipped) {
		t.Errorf("the canary does not run the shipped config again after the rollback (%v)", err)
	}
	// A config that does not validate changes nothing.
	invalid := candidate("invalid.yaml", "sampling_percentage: 10", "sampling_percentage: 10\n        no_such_key: 1")
	if code, _ := run(invalid); code != 2 {
		t.Errorf("an invalid config: exit %d, want 2", code)
	}

	close(stop)
	traces := <-sent
	f.waitAgentsDrained(90 * time.Second)
	for _, p := range append(f.agents, f.gateways...) {
		p.stop(syscall.SIGTERM)
	}
	u := unionLedgers(t, f.gateways)
	dups := u.check(t, traces)
	t.Logf("canary runs: calls sent %d, distinct in the ledgers %d (canary %d, other %d), physical rows %d, in both ledgers %d",
		traces*(fleetTraceSpans-1), len(u.byKey), u.perGW[0], u.perGW[1], u.rows, dups)
}
