package collector_test

import (
	"maps"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/otlptest"
)

// refusedRequestsMetric is the ledger exporter's export of the refused
// requests of the completeness account (its metadata.yaml).
const refusedRequestsMetric = "otelcol_exporter_ledger_completeness_requests_refused"

// TestMalformedRequestsCountedPerTenant sends bodies that are not OTLP
// over real OTLP/HTTP and OTLP/gRPC with each tenant's token and with a
// wrong one, and reads the refused requests per tenant and reason from the
// collector's metric and the UI's API: a malformed body of acme's counts
// for acme, not globex; one whose sender no token names, for the unknown
// tenant.
func TestMalformedRequestsCountedPerTenant(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	c := startIngestCollector(t, "ingest-auth-e2e.yaml", nil, "E2E_ON_MISMATCH=refuse")
	// The readiness probes were refused for their missing token.
	before := c.counter(t, refusedRequestsMetric, "tenant", "reason")
	garbage := []byte{0xff, 0xff, 0xff, 0xff, 0xff}
	for _, s := range []struct {
		name     string
		token    string
		encoding string
		want     int
	}{
		{"acme", acmeToken, "", http.StatusBadRequest},
		// The receiver would refuse it before any middleware, uncounted.
		{"acme, gzip-labelled garbage", acmeToken, "gzip", http.StatusBadRequest},
		{"wrong token", "guess", "", http.StatusUnauthorized},
	} {
		if code, err := c.postBody(s.token, s.encoding, garbage); err != nil || code != s.want {
			t.Fatalf("http %s: %d %v, want %d", s.name, code, err, s.want)
		}
	}
	for _, s := range []struct {
		name  string
		token string
		want  codes.Code
	}{
		{"globex", globexToken, codes.Internal},
		// gRPC decodes before it authenticates: a malformed body with a
		// wrong token is refused as malformed, of an unknown sender.
		{"wrong token", "guess", codes.Internal},
	} {
		if code, err := otlptest.SendRawTraces(c.grpcAddr, s.token, garbage); err != nil || code != s.want {
			t.Fatalf("grpc %s: %s %v, want %s", s.name, code, err, s.want)
		}
	}
	// A message flagged gzip-compressed that is not gzip fails to
	// decompress, before any interceptor; one in an unknown encoding is
	// refused before it is read.
	for encoding, want := range map[string]codes.Code{"gzip": codes.Internal, "br2": codes.Unimplemented} {
		if code, err := otlptest.SendFlaggedTraces(c.grpcAddr, globexToken, encoding, garbage); err != nil || code != want {
			t.Fatalf("grpc globex, %s-flagged garbage: %s %v, want %s", encoding, code, err, want)
		}
	}
	if code, _ := c.sendGRPC("guess", callTraces("guess-1", "")); code != codes.Unauthenticated {
		t.Fatalf("grpc wrong token: %s", code)
	}
	if code, _ := c.sendGRPC(acmeToken, callTraces("acme-ok", "")); code != codes.OK {
		t.Fatalf("grpc acme: %s", code)
	}

	unknown := conventions.UnknownTenant
	want := map[string]int{"acme/malformed": 2, "globex/malformed": 3, unknown + "/malformed": 1, unknown + "/auth": 2}
	got := map[string]int{}
	for k, v := range c.counter(t, refusedRequestsMetric, "tenant", "reason") {
		if d := v - before[k]; d != 0 {
			got[k] = d
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("%s grew by %v, want %v", refusedRequestsMetric, got, want)
	}

	var body struct {
		Collector *completeness.Snapshot `json:"collector"`
	}
	if err := c.get("/api/v1/completeness", &body); err != nil {
		t.Fatal(err)
	}
	if body.Collector == nil {
		t.Fatal("no collector side")
	}
	api := map[string]int64{}
	for _, tn := range body.Collector.Tenants {
		for r, n := range tn.RefusedRequests {
			if n != 0 && tn.Tenant != unknown {
				api[tn.Tenant+"/"+string(r)] = n
			}
		}
	}
	if wantAPI := map[string]int64{"acme/malformed": 2, "globex/malformed": 3}; !maps.Equal(api, wantAPI) {
		t.Errorf("API refused requests %v, want %v", api, wantAPI)
	}
}
