package collector_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/proctest"
)

// runCollector runs a collector on testdata/config in this process until
// the test ends and returns its OTLP/HTTP base URL.
func runCollector(t *testing.T, config string, env ...string) string {
	t.Helper()
	port := proctest.FreePort(t)
	t.Setenv("E2E_OTLP_PORT", port)
	for i := 0; i+1 < len(env); i += 2 {
		t.Setenv(env[i], env[i+1])
	}
	startInProcess(t, config)
	base := "http://127.0.0.1:" + port
	waitFor(t, "receiver listening", time.Minute, func() bool {
		resp, err := http.Get(base + "/v1/traces")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return base
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return buf.Bytes()
}

const validJSONTraces = `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"0102030405060708","name":"chat"}]}]}]}`

// Every class of malformed OTLP/HTTP request gets a 4xx that says so —
// never a 500, which senders retry forever — over the shipped receiver.
func TestMalformedRequestsGetClientErrors(t *testing.T) {
	base := runCollector(t, "otlpcheck.yaml", "E2E_MIDDLEWARES", "[{id: otlpcheck}]")
	protobuf := bpBatch(0, 3)
	cases := []struct {
		name, method, path, contentType, encoding string
		body                                      []byte
		want                                      int
	}{
		{"valid protobuf", "POST", "/v1/traces", "application/x-protobuf", "", protobuf, 200},
		{"valid JSON", "POST", "/v1/traces", "application/json", "", []byte(validJSONTraces), 200},
		{"valid gzipped JSON", "POST", "/v1/traces", "application/json", "gzip", gz([]byte(validJSONTraces)), 200},
		{"protobuf labelled JSON", "POST", "/v1/traces", "application/json", "", protobuf, 400},
		{"protobuf labelled JSON, logs", "POST", "/v1/logs", "application/json; charset=utf-8", "", protobuf, 400},
		{"JSON labelled protobuf", "POST", "/v1/traces", "application/x-protobuf", "", []byte(validJSONTraces), 400},
		{"truncated JSON", "POST", "/v1/traces", "application/json", "", []byte(validJSONTraces[:40]), 400},
		{"JSON of the wrong shape", "POST", "/v1/traces", "application/json", "", []byte(`{"resourceSpans":5}`), 400},
		{"invalid UTF-8 in JSON", "POST", "/v1/traces", "application/json", "", []byte("{\"resourceSpans\":[\xff\xfe"), 400},
		{"multibyte text cut by the error excerpt", "POST", "/v1/traces", "application/json", "", []byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"` + strings.Repeat("é", 40) + `",` + `}]}]}]}`), 400},
		{"truncated protobuf", "POST", "/v1/traces", "application/x-protobuf", "", protobuf[:len(protobuf)/2], 400},
		{"gzip header on a plain JSON body", "POST", "/v1/traces", "application/json", "gzip", []byte(validJSONTraces), 400},
		{"gzip header on a plain protobuf body", "POST", "/v1/traces", "application/x-protobuf", "gzip", protobuf, 400},
		{"valid gzipped protobuf", "POST", "/v1/traces", "application/x-protobuf", "gzip", gz(protobuf), 200},
		{"gzipped body over max_request_body_size once decompressed", "POST", "/v1/traces", "application/json", "gzip", gz(bytes.Repeat([]byte(" "), 2<<20)), 400},
		{"unknown content encoding", "POST", "/v1/traces", "application/json", "br2", []byte(validJSONTraces), 400},
		{"content encoding that is not UTF-8", "POST", "/v1/traces", "application/json", "\xff", []byte(validJSONTraces), 400},
		{"body over max_request_body_size", "POST", "/v1/traces", "application/json", "", bytes.Repeat([]byte(" "), 2<<20), 400},
		{"protobuf body over max_request_body_size", "POST", "/v1/traces", "application/x-protobuf", "", bytes.Repeat([]byte{0}, 2<<20), 400},
		{"unsupported content type", "POST", "/v1/traces", "text/plain", "", []byte("hello"), 415},
		{"no content type", "POST", "/v1/traces", "", "", protobuf, 415},
		{"GET", "GET", "/v1/traces", "application/json", "", nil, 405},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, base+c.path, bytes.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			if c.encoding != "" {
				req.Header.Set("Content-Encoding", c.encoding)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.want {
				t.Fatalf("%d %q; want %d", resp.StatusCode, body, c.want)
			}
			if c.want == 400 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && !strings.Contains(string(body), `"code":3`) && !strings.Contains(string(body), `"code": 3`) {
				t.Fatalf("400 without an OTLP InvalidArgument status: %q", body)
			}
		})
	}
}
