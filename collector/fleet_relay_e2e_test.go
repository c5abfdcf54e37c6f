package collector_test

import (
	"maps"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/docketlabs/docket/internal/conventions"
)

// nonLoopbackIP is an IPv4 address of this machine other than loopback,
// for a gateway that agents reach from elsewhere; the test skips without
// one.
func nonLoopbackIP(t *testing.T) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
			return n.IP.To4()
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address: agents on other hosts cannot be shown")
	return nil
}

// TestFleetGatewayTrustsItsAgentsFromElsewhere runs the two layers as
// deployed, agents on other hosts: the gateway (deploy/gateway.yaml)
// listens on a non-loopback address and the agents (deploy/agent.yaml,
// and one set to flag spoofs) reach it there with the agents' client
// certificate. The gateway keeps the tenant an agent stamped; it refuses,
// and counts, a certificate from the agents' CA of another name, and the
// agents' certificate on data without a tenant.
func TestFleetGatewayTrustsItsAgentsFromElsewhere(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	ip := nonLoopbackIP(t)
	f := newFleet(t, ip)
	f.gatewayHost = ip.String()
	gw := f.addGateway("../deploy/gateway.yaml")
	f.addAgent(gw)
	shipped, err := os.ReadFile("../deploy/agent.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const refuse = "tenant:\n    on_mismatch: refuse"
	if !strings.Contains(string(shipped), refuse) {
		t.Fatalf("deploy/agent.yaml has no %q", refuse)
	}
	flagging := filepath.Join(f.dir, "agent-flag.yaml")
	if err := os.WriteFile(flagging, []byte(strings.Replace(string(shipped), refuse, "tenant:\n    on_mismatch: flag", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	f.addAgentOn(flagging, gw)
	f.startAll()

	// Applications send through the agents with acme's token.
	const traces = 20
	s := f.sender()
	for _, td := range fleetHalves(0, traces) {
		if err := s.send(0, td); err != nil {
			t.Fatal(err)
		}
	}
	// A sender of acme's that writes globex on its resource: the shipped
	// agent refuses the request, the flagging one stores it as acme.
	toAgent := func(i int) *ingestCollector {
		return &ingestCollector{grpcAddr: f.agents[i].grpcAddr, clientTLS: f.ca.client(), metricsURL: f.agents[i].mURL}
	}
	if code, err := toAgent(0).sendGRPC(acmeToken, callTraces("spoof-refused", "globex")); code != codes.PermissionDenied {
		t.Errorf("the agent let acme's sender claim globex: %s %v", code, err)
	}
	if code, err := toAgent(1).sendGRPC(acmeToken, callTraces("spoof-flagged", "globex")); code != codes.OK {
		t.Errorf("the flagging agent refused acme's sender claiming globex: %s %v", code, err)
	}

	// Straight to the gateway's address, past the agents.
	toGateway := func(names ...string) *ingestCollector {
		cfg := f.ca.client(names...)
		cfg.ServerName = ip.String()
		return &ingestCollector{grpcAddr: gw.grpcAddr, clientTLS: cfg, metricsURL: gw.mURL}
	}
	// A certificate from the agents' CA, but a tenant's, not the agents'.
	if code, err := toGateway("billing.acme.internal").sendGRPC("", callTraces("not-a-relay", "acme")); code != codes.Unauthenticated {
		t.Errorf("a certificate not of the agents' name: %s %v, want Unauthenticated", code, err)
	}
	// The agents' certificate on data that names no tenant.
	if code, err := toGateway(fleetAgentName).sendGRPC("", callTraces("relay-no-tenant", "")); code != codes.PermissionDenied {
		t.Errorf("the agents' certificate without a stamped tenant: %s %v, want PermissionDenied", code, err)
	}
	// The agents' certificate is a relay's: what it stamped is the tenant.
	if code, err := toGateway(fleetAgentName).sendGRPC("", callTraces("relay-globex", "globex")); code != codes.OK {
		t.Errorf("the agents' certificate with globex stamped: %s %v", code, err)
	}

	f.waitAgentsDrained(time.Minute)
	// Spans: the traces' three each, the flagged call and the direct one.
	wantRecords := map[string]int{
		"relayed/acme":   traces*fleetTraceSpans + 1,
		"relayed/globex": 1,
		"unauthenticated/" + conventions.UnknownTenant: 1,
	}
	gwc := &ingestCollector{metricsURL: gw.mURL}
	var records map[string]int
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if records = gwc.tenantCounts(t); maps.Equal(records, wantRecords) {
			break
		}
	}
	if !maps.Equal(records, wantRecords) {
		t.Errorf("the gateway's otelcol_processor_tenant_records: %v, want %v", records, wantRecords)
	}
	if got := toAgent(1).tenantCounts(t); got["flagged/acme"] != 1 {
		t.Errorf("the flagging agent's otelcol_processor_tenant_records: %v, want flagged/acme 1", got)
	}
	// The refusals count in the gateway's completeness account: the
	// certificate as a request refused for its credentials, the relay's
	// tenant-less span as refused_auth.
	unknown := conventions.UnknownTenant
	if got := gwc.counter(t, refusedRequestsMetric, "tenant", "reason"); got[unknown+"/auth"] != 1 {
		t.Errorf("the gateway's %s: %v, want %s/auth 1", refusedRequestsMetric, got, unknown)
	}
	if got := gwc.counter(t, completenessMetric, "tenant", "stage"); got[unknown+"/refused_auth"] != 1 {
		t.Errorf("the gateway's %s: %v, want %s/refused_auth 1", completenessMetric, got, unknown)
	}

	for _, p := range append(f.agents, gw) {
		p.stop(syscall.SIGTERM)
	}
	want := map[string]bool{}
	for i := range traces {
		for j := 1; j < fleetTraceSpans; j++ {
			want[callKey("acme", fleetTraceID(i).String(), fleetSpanID(i, j).String())] = true
		}
	}
	span := callTraces("", "").ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SpanID().String()
	want[callKey("acme", traceIDOf("spoof-flagged").String(), span)] = true
	want[callKey("globex", traceIDOf("relay-globex").String(), span)] = true
	got := map[string]bool{}
	for k := range unionLedgers(t, f.gateways).byKey {
		got[k] = true
	}
	if !maps.Equal(got, want) {
		t.Errorf("the gateway's ledger holds %d calls, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
}
