package collector_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// TestCompletenessAccountOverOTLP sends calls of two tenants over real
// OTLP/gRPC — one refused for naming another tenant, one with a bad token
// count, one sent again with other content — and reads the account per
// tenant from the collector's metric and the UI's API, beside what the
// ledger (chDB) holds.

// completenessMetric is the ledger exporter's export of the completeness
// account (its metadata.yaml).
const completenessMetric = "otelcol_exporter_ledger_completeness_spans"

func TestCompletenessAccountOverOTLP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	c := startIngestCollector(t, "ingest-auth-e2e.yaml", nil, "E2E_ON_MISMATCH=refuse")
	send := func(token string, name string, edit func(a map[string]int64)) codes.Code {
		t.Helper()
		td := callTraces(name, "")
		if edit != nil {
			m := map[string]int64{}
			edit(m)
			a := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Attributes()
			for k, v := range m {
				a.PutInt(k, v)
			}
		}
		code, _ := c.sendGRPC(token, td)
		return code
	}
	for _, name := range []string{"acme-1", "acme-2"} {
		if code := send(acmeToken, name, nil); code != codes.OK {
			t.Fatalf("%s: %s", name, code)
		}
	}
	if code := send(acmeToken, "acme-bad", func(a map[string]int64) { a[conventions.UsageInput] = -5 }); code != codes.OK {
		t.Fatalf("bad value: %s", code)
	}
	if code, _ := c.sendGRPC(acmeToken, callTraces("acme-spoof", "globex")); code != codes.PermissionDenied {
		t.Fatalf("spoofed send: %s", code)
	}
	if code := send(globexToken, "globex-1", nil); code != codes.OK {
		t.Fatalf("globex: %s", code)
	}
	c.waitStored(t, 4)
	// acme-1 again with another token count: written, and a conflict.
	if code := send(acmeToken, "acme-1", func(a map[string]int64) { a[conventions.UsageInput] = 11 }); code != codes.OK {
		t.Fatalf("resend: %s", code)
	}
	want := map[string]int{
		"acme/refused_auth": 1, "acme/received": 4, "acme/flagged": 1, "acme/written": 4,
		"globex/received": 1, "globex/written": 1,
	}
	var got map[string]int
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if got = c.counter(t, completenessMetric, "tenant", "stage"); maps.Equal(got, want) {
			break
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s: %v, want %v", completenessMetric, got, want)
	}

	var body struct {
		Collector *completeness.Snapshot     `json:"collector"`
		Ledger    []ledgerstore.TenantCounts `json:"ledger"`
	}
	var ledgerSide map[string]ledgerstore.TenantCounts
	wantLedger := map[string]ledgerstore.TenantCounts{
		"acme":   {Tenant: "acme", Spans: 3, Flagged: 1, Conflicts: 1},
		"globex": {Tenant: "globex", Spans: 1},
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if err := c.get("/api/v1/completeness", &body); err != nil {
			t.Fatal(err)
		}
		ledgerSide = map[string]ledgerstore.TenantCounts{}
		for _, l := range body.Ledger {
			ledgerSide[l.Tenant] = l
		}
		if maps.Equal(ledgerSide, wantLedger) {
			break
		}
	}
	if !maps.Equal(ledgerSide, wantLedger) {
		t.Errorf("ledger side %v, want %v", ledgerSide, wantLedger)
	}
	if body.Collector == nil {
		t.Fatal("no collector side")
	}
	// The readiness probes, sent without a token, are the unknown tenant's.
	tenants := slices.DeleteFunc(body.Collector.Tenants, func(tn completeness.Tenant) bool { return tn.Tenant == conventions.UnknownTenant })
	if len(tenants) != 2 {
		t.Fatalf("collector side %+v", body.Collector)
	}
	for _, tn := range tenants {
		for st, n := range tn.Counts {
			if n != int64(want[tn.Tenant+"/"+string(st)]) {
				t.Errorf("API: %s/%s = %d, metric says %d", tn.Tenant, st, n, want[tn.Tenant+"/"+string(st)])
			}
		}
		if tn.Pending != 0 {
			t.Errorf("API: %s pending %d after everything was written", tn.Tenant, tn.Pending)
		}
	}
}
