package collector_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// TestFleetCountsAppDropsOnce runs two example apps whose SDK drops spans
// (a tiny non-blocking queue) behind an agent (deploy/agent.yaml) in front
// of two gateways (deploy/gateway.yaml), and restarts the agent halfway,
// while the apps keep reporting their running totals: the gateways
// together count acme's dropped_in_app as the SDKs counted it, once — each
// process's totals reach one gateway, which counts their growth, the
// drops of the agent's own outage included.
func TestFleetCountsAppDropsOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector and the example app")
	}
	f := newFleet(t)
	gwA, gwB := f.addGateway("../deploy/gateway.yaml"), f.addGateway("../deploy/gateway.yaml")
	agent := f.addAgent(gwA, gwB)
	f.startAll()

	// The apps trust the fleet's CA and tell their processes apart.
	t.Setenv("SSL_CERT_FILE", f.caFile)
	apps := make([]*droppingApp, 2)
	for i := range apps {
		t.Setenv("OTEL_RESOURCE_ATTRIBUTES", fmt.Sprintf("service.instance.id=llmapp-%d", i))
		apps[i] = startDroppingApp(t, agent.grpcAddr, "-otlp-tls")
	}
	dropped := func() (perGW [2]int) {
		for i, gw := range []*fleetProc{gwA, gwB} {
			perGW[i] = (&ingestCollector{metricsURL: gw.mURL}).counter(t, completenessMetric, "tenant", "stage")["acme/dropped_in_app"]
		}
		return perGW
	}
	// settled waits until the gateways' count is above zero and has not
	// changed for three of the apps' export intervals.
	settled := func() [2]int {
		var last [2]int
		since := time.Now()
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
			n := dropped()
			if n != last {
				last, since = n, time.Now()
			}
			if n[0]+n[1] > 0 && time.Since(since) > 3*time.Second {
				return n
			}
		}
		t.Fatalf("the gateways' dropped_in_app of acme (%v) did not settle above zero within a minute", last)
		return last
	}

	for _, a := range apps {
		a.burst(300)
	}
	before := settled()
	// The agent restarts; the apps' reports fail meanwhile, and their
	// queues fill and drop while it is away.
	agent.stop(syscall.SIGTERM)
	for _, a := range apps {
		a.burst(100)
	}
	agent.start()
	agent.waitHealthy()
	for _, a := range apps {
		a.burst(300)
	}
	want := 0
	for _, a := range apps {
		want += a.stop()
	}
	var got [2]int
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if got = dropped(); got[0]+got[1] == want {
			break
		}
	}
	t.Logf("SDKs dropped %d spans; gateways A, B counted %v (%v before the agent's restart)", want, got, before)
	if got[0]+got[1] != want {
		t.Errorf("the gateways counted %d dropped spans of acme, the SDKs %d", got[0]+got[1], want)
	}
}
