package collector_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.yaml.in/yaml/v3"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/ledger"
)

// requestSecrets are put on HTTP server spans in every place a request
// carries them; none may reach the ledger, the backend or the log.
var requestSecrets = []string{"query-secret-1", "full-secret-2", "header-secret-3", "cookie-secret-4", "body-secret-5", "name-secret-6", "target-secret-7"}

// appendServer appends a server span (span ID 0x5e…) of trace tid as an
// HTTP instrumentation sends it, with query, headers and body.
func appendServer(spans ptrace.SpanSlice, tid pcommon.TraceID) {
	s := spans.AppendEmpty()
	s.SetTraceID(tid)
	s.SetSpanID(pcommon.SpanID{0x5e, tid[0], tid[1]})
	s.SetKind(ptrace.SpanKindServer)
	now := time.Now()
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-2 * time.Second)))
	s.SetEndTimestamp(pcommon.NewTimestampFromTime(now))
	s.SetName("POST /ask?token=name-secret-6")
	a := s.Attributes()
	a.PutStr(conventions.HTTPRequestMethod, "POST")
	a.PutStr(conventions.HTTPRoute, "/ask")
	a.PutInt(conventions.HTTPResponseStatusCode, 200)
	a.PutStr("url.query", "token=query-secret-1")
	a.PutStr("url.full", "https://app.example/ask?token=full-secret-2")
	a.PutStr("http.target", "/ask?token=target-secret-7")
	a.PutEmptySlice("http.request.header.authorization").AppendEmpty().SetStr("Bearer header-secret-3")
	a.PutStr("http.request.header.cookie", "sid=cookie-secret-4")
	a.PutStr("http.request.body.content", `{"q":"body-secret-5"}`)
}

// The server span of a trace with an LLM call reaches the ledger, whether
// it arrives before the call or after it, with route, method and status
// only; the server span of a trace without a call does not; and no query
// string, header or body of either reaches the ledger, the tracing
// backend or the collector's log.
func TestRequestSpansThroughCollector(t *testing.T) {
	p, be := startWithBackend(t, "request-e2e.yaml")

	before, after, noCall := pcommon.TraceID{0xb1, 1}, pcommon.TraceID{0xa1, 2}, pcommon.TraceID{0xc1, 3}
	batch := func(fill func(ptrace.SpanSlice)) {
		td, spans := spantest.Traces(map[string]any{conventions.ServiceName: "e2e-app"})
		fill(spans)
		send(t, p.otlpURL, td)
	}
	call := func(spans ptrace.SpanSlice, tid pcommon.TraceID, i int) {
		appendCall(spans, i)
		s := spans.At(spans.Len() - 1)
		s.SetTraceID(tid)
		s.SetParentSpanID(pcommon.SpanID{0x5e, tid[0], tid[1]})
	}
	// The server span first, its call in a later batch; the call first,
	// its server span later; a server span with no call at all.
	batch(func(s ptrace.SpanSlice) { appendServer(s, before); appendServer(s, noCall) })
	batch(func(s ptrace.SpanSlice) { call(s, before, 1); call(s, after, 2) })
	batch(func(s ptrace.SpanSlice) { appendServer(s, after) })

	evidenceOf := func(tid pcommon.TraceID) (ledger.EvidenceSpan, bool) {
		var ev struct {
			EvidenceSpans []ledger.EvidenceSpan `json:"evidence_spans"`
		}
		if p.get("/api/v1/evidence/"+tid.String(), &ev) != nil {
			return ledger.EvidenceSpan{}, false
		}
		for _, s := range ev.EvidenceSpans {
			if s.Category == conventions.CategoryRequest {
				return s, true
			}
		}
		return ledger.EvidenceSpan{}, false
	}
	waitFor(t, "both server spans in the ledger", 60*time.Second, func() bool {
		_, a := evidenceOf(before)
		_, b := evidenceOf(after)
		return a && b
	})
	want := map[string]string{conventions.HTTPRequestMethod: "POST", conventions.HTTPRoute: "/ask", conventions.HTTPResponseStatusCode: "200"}
	for _, tid := range []pcommon.TraceID{before, after} {
		s, _ := evidenceOf(tid)
		if !reflect.DeepEqual(s.SpanAttributes, want) || s.SpanName != "POST /ask" {
			t.Errorf("trace %s: request span %q %v, want \"POST /ask\" %v", tid, s.SpanName, s.SpanAttributes, want)
		}
		raw, _ := json.Marshal(s)
		for _, secret := range requestSecrets {
			if bytes.Contains(raw, []byte(secret)) {
				t.Errorf("%q reached the ledger: %s", secret, raw)
			}
		}
	}
	if _, ok := evidenceOf(noCall); ok {
		t.Error("the server span of a trace without an LLM call was kept")
	}
	waitFor(t, "the server spans at the backend", 30*time.Second, func() bool {
		be.mu.Lock()
		defer be.mu.Unlock()
		n := 0
		for _, td := range be.traces {
			n += td.SpanCount()
		}
		return n >= 5
	})
	be.mu.Lock()
	defer be.mu.Unlock()
	if !bytes.Contains(be.raw.Bytes(), []byte("/ask")) {
		t.Fatal("the backend got no server span")
	}
	log, _ := os.ReadFile(filepath.Join(p.dir, "collector.log"))
	for _, secret := range requestSecrets {
		if bytes.Contains(be.raw.Bytes(), []byte(secret)) {
			t.Errorf("%q reached the tracing backend", secret)
		}
		if bytes.Contains(log, []byte(secret)) {
			t.Errorf("%q reached the collector log", secret)
		}
	}
}

// The request redaction this test runs is the one deploy/collector.yaml
// ships.
func TestRequestRedactionMatchesDeploy(t *testing.T) {
	block := func(path string) any {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var cfg struct {
			Processors map[string]any `yaml:"processors"`
		}
		if err := yaml.Unmarshal(b, &cfg); err != nil {
			t.Fatal(err)
		}
		p, ok := cfg.Processors["transform/request"]
		if !ok {
			t.Fatalf("%s has no transform/request", path)
		}
		return p
	}
	if d, e := block("../deploy/collector.yaml"), block("testdata/request-e2e.yaml"); !reflect.DeepEqual(d, e) {
		t.Fatalf("deploy/collector.yaml's transform/request differs from the test's:\n%v\n%v", d, e)
	}
}
