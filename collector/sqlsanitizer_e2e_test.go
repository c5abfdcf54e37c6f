package collector_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/spantest"
)

// backend is an OTLP/HTTP endpoint that keeps what it receives.
type backend struct {
	mu     sync.Mutex
	traces []ptrace.Traces
	logs   []plog.Logs
	raw    bytes.Buffer
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.raw.Write(body)
	switch r.URL.Path {
	case "/v1/traces":
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b.traces = append(b.traces, req.Traces())
	case "/v1/logs":
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		b.logs = append(b.logs, req.Logs())
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(http.StatusOK)
}

// startWithBackend starts a collector on testdata/config whose exporter
// sends to a backend of the test's own (E2E_BACKEND), skipped under -short.
func startWithBackend(t *testing.T, config string) (*collectorProc, *backend) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	be := &backend{}
	srv := httptest.NewServer(be)
	t.Cleanup(srv.Close)
	p := newCollectorProc(t, docketBinary(t), config, "E2E_BACKEND="+srv.URL)
	p.start()
	return p, be
}

// dbParameterEmail is a query parameter the sanitizer drops unless told
// to keep it.
const dbParameterEmail = "db.query.parameter.email"

var sqlCases = []struct{ system, query, secret, want string }{
	{"postgresql", "SELECT * FROM users WHERE email = 'alice.e2e@example.com' AND id = $1", "alice.e2e@example.com", "SELECT * FROM users WHERE email = ? AND id = $1"},
	{"mysql", `UPDATE accounts SET balance = 4711.25 WHERE iban = "DE89370400440532013000"`, "DE89370400440532013000", "UPDATE accounts SET balance = ? WHERE iban = ?"},
	{"mssql", "SELECT name FROM patients WHERE ssn = N'078-05-1120' -- lookup for 078-05-1120", "078-05-1120", "SELECT name FROM patients WHERE ssn = ?"},
	{"", "INSERT INTO covid19_cases (name, phone) VALUES ('Kim Min-jun', '010-1234-5678')", "010-1234-5678", "INSERT INTO covid19_cases (name, phone) VALUES (?, ?)"},
	{"postgresql", "SELECT 1 FROM t WHERE note = 'unterminated secret-4242", "secret-4242", ""},
}

func TestSQLSanitizerThroughCollector(t *testing.T) {
	p, be := startWithBackend(t, "sqlsanitizer-e2e.yaml")

	td := ptrace.NewTraces()
	spans := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans()
	ld := plog.NewLogs()
	records := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i, c := range sqlCases {
		s := spantest.DB(spans, c.system, c.query)
		s.SetTraceID(pcommon.TraceID{byte(i + 1)})
		s.SetSpanID(pcommon.SpanID{byte(i + 1)})
		s.Attributes().PutStr(dbParameterEmail, c.secret)
		r := records.AppendEmpty()
		r.Attributes().PutStr(conventions.DBStatement, c.query)
		if c.system != "" {
			r.Attributes().PutStr(conventions.DBSystem, c.system)
		}
	}
	body, _ := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
	sendBody(t, p.otlpURL, body)
	lbody, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	sendBody(t, strings.Replace(p.otlpURL, "/v1/traces", "/v1/logs", 1), lbody)

	waitFor(t, "spans and logs at the backend", 30*time.Second, func() bool {
		be.mu.Lock()
		defer be.mu.Unlock()
		return len(be.traces) > 0 && len(be.logs) > 0
	})
	be.mu.Lock()
	defer be.mu.Unlock()
	out := be.traces[0].ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	outLogs := be.logs[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if out.Len() != len(sqlCases) || outLogs.Len() != len(sqlCases) {
		t.Fatalf("got %d spans, %d logs", out.Len(), outLogs.Len())
	}
	for i, c := range sqlCases {
		for _, attrs := range []pcommon.Map{out.At(i).Attributes(), outLogs.At(i).Attributes()} {
			text, ok := attrs.Get(conventions.DBQueryText)
			if !ok {
				text, ok = attrs.Get(conventions.DBStatement)
			}
			mark, _ := attrs.Get(conventions.QuerySanitization)
			if !ok || mark.Str() == "" {
				t.Errorf("case %d: text %v marker %q", i, ok, mark.AsString())
				continue
			}
			if c.want != "" && strings.TrimSpace(text.Str()) != c.want {
				t.Errorf("case %d: got %q, want %q", i, text.Str(), c.want)
			}
			if c.want == "" && mark.Str() != "partial" {
				t.Errorf("case %d: unterminated literal marked %q, want partial", i, mark.Str())
			}
		}
		if _, ok := out.At(i).Attributes().Get(dbParameterEmail); ok {
			t.Errorf("case %d: db.query.parameter.* kept without opt-in", i)
		}
	}
	// Nothing of any literal left the collector, in any byte of what it sent
	// or in its own log.
	log, _ := os.ReadFile(filepath.Join(p.dir, "collector.log"))
	for _, c := range sqlCases {
		if bytes.Contains(be.raw.Bytes(), []byte(c.secret)) {
			t.Errorf("%q reached the backend", c.secret)
		}
		if bytes.Contains(log, []byte(c.secret)) {
			t.Errorf("%q reached the collector log", c.secret)
		}
	}
}
