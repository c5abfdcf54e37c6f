package collector_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/internal/spantest"
)

// Bearer tokens of the ingest tests and their SHA-256, as an operator
// would list them in the tokens file.
const (
	acmeToken   = "e2e-acme-2f1c9a7d5b3e4f60a8b1c2d3e4f5a6b7"
	globexToken = "e2e-globex-9d8c7b6a5f4e3d2c1b0a99887766554"
)

// ingestCollector is a collector with authenticated OTLP receivers.
type ingestCollector struct {
	*collectorProc
	grpcAddr, metricsURL string
	// clientTLS is the TLS of the next sends; nil sends in plaintext.
	clientTLS *tls.Config
}

// startIngestCollector starts the collector of testdata/config, with bearer
// tokens for acme and globex in E2E_TOKENS_FILE, and waits until both
// receivers answer (a refusal is an answer) to a client with clientTLS.
func startIngestCollector(t *testing.T, config string, clientTLS *tls.Config, env ...string) *ingestCollector {
	tokens := filepath.Join(t.TempDir(), "ingest-tokens")
	body := fmt.Sprintf("# tenant sha256(token)\nacme %s\nglobex %s\n", sha256Hex(acmeToken), sha256Hex(globexToken))
	if err := os.WriteFile(tokens, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	grpcPort, metricsPort := proctest.FreePort(t), proctest.FreePort(t)
	p := newCollectorProc(t, docketBinary(t), config, append(env, "E2E_TOKENS_FILE="+tokens,
		"E2E_GRPC_PORT="+grpcPort, "E2E_METRICS_PORT="+metricsPort)...)
	p.start()
	c := &ingestCollector{collectorProc: p, grpcAddr: "127.0.0.1:" + grpcPort,
		metricsURL: "http://127.0.0.1:" + metricsPort + "/metrics", clientTLS: clientTLS}
	if clientTLS != nil {
		c.otlpURL = strings.Replace(c.otlpURL, "http://", "https://", 1)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		_, herr := c.postHTTP("", callTraces("ready", ""))
		_, gerr := c.sendGRPC("", callTraces("ready", ""))
		if herr == nil && (gerr == nil || status.Code(gerr) != codes.Unavailable) {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("collector not answering: http %v, grpc %v; log in %s", herr, gerr, p.dir)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// callTraces is one LLM call span in trace name; claim, when set, is the
// tenant the sender writes on the resource.
func callTraces(name, claim string) ptrace.Traces {
	resource := map[string]any{conventions.ServiceName: "ingest-e2e"}
	if claim != "" {
		resource[conventions.TenantAttribute] = claim
	}
	td, spans := spantest.Traces(resource)
	s := spantest.Chat(spans, "openai", "gpt-4o-mini")
	spantest.At(s, traceIDOf(name), pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, time.Now())
	s.Attributes().PutInt(conventions.UsageInput, 10)
	return td
}

func traceIDOf(name string) pcommon.TraceID {
	var id pcommon.TraceID
	copy(id[:], fmt.Sprintf("%-16s", name))
	return id
}

// postHTTP sends over OTLP/HTTP with the bearer token (none when empty)
// and returns the status code; err is a transport error.
func (c *ingestCollector) postHTTP(token string, td ptrace.Traces) (int, error) {
	body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	if err != nil {
		return 0, err
	}
	return c.postBody(token, "", body)
}

// postBody sends body as an OTLP/HTTP protobuf traces request, labelled
// with the Content-Encoding encoding unless it is empty.
func (c *ingestCollector) postBody(token, encoding string, body []byte) (int, error) {
	req, err := http.NewRequest(http.MethodPost, c.otlpURL, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if encoding != "" {
		req.Header.Set("Content-Encoding", encoding)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: c.clientTLS}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// sendGRPC sends over OTLP/gRPC with the bearer token (none when empty).
func (c *ingestCollector) sendGRPC(token string, td ptrace.Traces) (codes.Code, error) {
	creds := insecure.NewCredentials()
	if c.clientTLS != nil {
		creds = credentials.NewTLS(c.clientTLS)
	}
	conn, err := grpc.NewClient(c.grpcAddr, grpc.WithTransportCredentials(creds))
	if err != nil {
		return codes.Unknown, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	_, err = ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td))
	return status.Code(err), err
}

// storedTenants returns the tenant of every ledger call, by trace name.
func (c *ingestCollector) storedTenants(t *testing.T) map[string]string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, c.apiURL+"/api/v1/calls?limit=100", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-User", "e2e")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("calls: %s", resp.Status)
	}
	var out struct {
		Calls []struct{ Tenant, Trace_id string }
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, call := range out.Calls {
		name, err := hex.DecodeString(call.Trace_id)
		if err != nil {
			t.Fatalf("trace id %q: %v", call.Trace_id, err)
		}
		got[strings.TrimSpace(string(name))] = call.Tenant
	}
	return got
}

// tenantCounts reads otelcol_processor_tenant_records from the collector's metrics,
// by "outcome/tenant".
func (c *ingestCollector) tenantCounts(t *testing.T) map[string]int {
	return c.counter(t, "otelcol_processor_tenant_records", "outcome", "tenant")
}

// counter reads a counter from the collector's metrics, summed by the
// values of labels joined with "/"; points that are 0 are left out.
func (c *ingestCollector) counter(t *testing.T, name string, labels ...string) map[string]int {
	t.Helper()
	resp, err := http.Get(c.metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	out := map[string]int{}
	line := regexp.MustCompile(`(?m)^` + name + `(?:_total)?\{([^}]*)\} (\S+)$`)
	label := regexp.MustCompile(`(\w+)="([^"]*)"`)
	for _, m := range line.FindAllStringSubmatch(string(text), -1) {
		got := map[string]string{}
		for _, l := range label.FindAllStringSubmatch(m[1], -1) {
			got[l[1]] = l[2]
		}
		n, _ := strconv.ParseFloat(m[2], 64)
		if n == 0 {
			continue
		}
		key := make([]string, len(labels))
		for i, l := range labels {
			key[i] = got[l]
		}
		out[strings.Join(key, "/")] += int(n)
	}
	return out
}

func TestIngestRefusesUnauthenticatedSenders(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	c := startIngestCollector(t, "ingest-auth-e2e.yaml", nil, "E2E_ON_MISMATCH=refuse")
	for _, tc := range []struct{ name, token string }{
		{"no token", ""}, {"wrong token", "e2e-acme-guess"}, {"the token's hash", sha256Hex(acmeToken)},
	} {
		if code, err := c.postHTTP(tc.token, callTraces("unauth-http", "")); err != nil || code != http.StatusUnauthorized {
			t.Errorf("OTLP/HTTP with %s: %d %v, want 401", tc.name, code, err)
		}
		if code, _ := c.sendGRPC(tc.token, callTraces("unauth-grpc", "")); code != codes.Unauthenticated {
			t.Errorf("OTLP/gRPC with %s: %s, want Unauthenticated", tc.name, code)
		}
	}
	// The tokens that are listed are let in, each as its own tenant.
	if code, err := c.postHTTP(acmeToken, callTraces("acme-http", "")); err != nil || code != http.StatusOK {
		t.Fatalf("OTLP/HTTP with acme's token: %d %v", code, err)
	}
	if code, err := c.sendGRPC(globexToken, callTraces("globex-grpc", "globex")); code != codes.OK {
		t.Fatalf("OTLP/gRPC with globex's token: %v", err)
	}
	got := c.waitStored(t, 2)
	want := map[string]string{"acme-http": "acme", "globex-grpc": "globex"}
	if !maps.Equal(got, want) {
		t.Errorf("ledger holds %v, want %v", got, want)
	}
}

func TestIngestTenantSpoofing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	for _, mode := range []string{"refuse", "flag"} {
		t.Run(mode, func(t *testing.T) {
			c := startIngestCollector(t, "ingest-auth-e2e.yaml", nil, "E2E_ON_MISMATCH="+mode)
			// Acme's token, claiming globex, over both protocols.
			httpCode, err := c.postHTTP(acmeToken, callTraces("spoof-http", "globex"))
			if err != nil {
				t.Fatal(err)
			}
			grpcCode, _ := c.sendGRPC(acmeToken, callTraces("spoof-grpc", "globex"))
			if code, _ := c.sendGRPC(globexToken, callTraces("globex-own", "")); code != codes.OK {
				t.Fatalf("an honest send was refused: %s", code)
			}
			want := map[string]string{"globex-own": "globex"}
			wantCounts := map[string]int{"authenticated/globex": 1}
			if mode == "refuse" {
				if httpCode != http.StatusForbidden || grpcCode != codes.PermissionDenied {
					t.Errorf("spoofed sends answered HTTP %d, gRPC %s; want 403, PermissionDenied", httpCode, grpcCode)
				}
				wantCounts["refused/acme"] = 2
			} else {
				if httpCode != http.StatusOK || grpcCode != codes.OK {
					t.Errorf("flagged sends answered HTTP %d, gRPC %s; want them accepted", httpCode, grpcCode)
				}
				want["spoof-http"], want["spoof-grpc"] = "acme", "acme"
				wantCounts["flagged/acme"] = 2
			}
			got := c.waitStored(t, len(want))
			if !maps.Equal(got, want) {
				t.Errorf("ledger holds %v, want %v (a spoofed call must never be stored as globex)", got, want)
			}
			if counts := c.tenantCounts(t); !maps.Equal(counts, wantCounts) {
				t.Errorf("otelcol_processor_tenant_records: %v, want %v", counts, wantCounts)
			}
		})
	}
}

// waitStored waits until the ledger holds n calls, then returns them after
// a moment in which nothing more may arrive.
func (c *ingestCollector) waitStored(t *testing.T, n int) map[string]string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(c.storedTenants(t)) < n && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
	}
	time.Sleep(time.Second)
	return c.storedTenants(t)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
