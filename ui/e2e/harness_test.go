package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ui/apiclient"
	"github.com/docketlabs/docket/ui/auth"

	"github.com/docketlabs/docket/internal/proctest"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// stack is docket (collector + ledger + content store + UI) and the
// example LLM application, each a subprocess on free ports.
type stack struct {
	t       *testing.T
	bin     string
	data    string
	env     []string
	uiURL   string
	otlp    string
	appURL  string
	admin   string // the admin's one-time password
	docket  *exec.Cmd
	llmapp  *exec.Cmd
	appLogs *os.File

	logMu sync.Mutex
	log   bytes.Buffer
}

// oneTimePassword finds the admin's password in the file docket writes it
// to when stderr is not a terminal (as here).
var oneTimePassword = regexp.MustCompile(`(?m)^([A-Z2-7]{26})$`)

// startStack starts docket on testdata/ui-e2e.yaml and the example app
// sending to it, and reads the admin's one-time password from the 0600
// file docket writes it to.
func startStack(t *testing.T) *stack {
	t.Helper()
	shorttest.Needs(t, shorttest.ChDB, shorttest.Chromium)
	s := &stack{t: t, bin: proctest.Build(t, "github.com/docketlabs/docket/cmd/docket"), data: t.TempDir()}
	llmappBin := proctest.Build(t, "github.com/docketlabs/docket/examples/llmapp")
	uiPort, otlpPort := proctest.FreePort(t), proctest.FreePort(t)
	s.uiURL, s.otlp = "http://127.0.0.1:"+uiPort, "127.0.0.1:"+otlpPort
	s.env = append(os.Environ(), "E2E_DATA="+s.data, "E2E_UI_PORT="+uiPort, "E2E_OTLP_PORT="+otlpPort)
	s.startDocket()
	waitHTTP(t, s.uiURL+"/healthz")
	raw, err := os.ReadFile(auth.OneTimePasswordFile(filepath.Join(s.data, "ui-users.json")))
	m := oneTimePassword.FindSubmatch(raw)
	if err != nil || m == nil {
		t.Fatalf("docket wrote no one-time admin password (%v):\n%s", err, s.logText())
	}
	s.admin = string(m[1])
	if strings.Contains(s.logText(), s.admin) {
		t.Fatal("the one-time admin password is in docket's log")
	}

	appPort := proctest.FreePort(t)
	s.appURL = "http://127.0.0.1:" + appPort
	if s.appLogs, err = os.Create(filepath.Join(s.data, "llmapp.log")); err != nil {
		t.Fatal(err)
	}
	s.llmapp = exec.Command(llmappBin, "-listen", "127.0.0.1:"+appPort, "-otlp-endpoint", s.otlp, "-customers", "20")
	s.llmapp.Stdout, s.llmapp.Stderr = s.appLogs, s.appLogs
	if err := s.llmapp.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(s.llmapp) })
	waitHTTP(t, s.appURL)
	return s
}

// startDocket starts the docket process, collecting its log.
func (s *stack) startDocket() {
	s.t.Helper()
	s.docket = exec.Command(s.bin, "collector", "--config", "testdata/ui-e2e.yaml")
	s.docket.Env = s.env
	stderr, err := s.docket.StderrPipe()
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.docket.Start(); err != nil {
		s.t.Fatal(err)
	}
	cmd := s.docket
	s.t.Cleanup(func() { stop(cmd) })
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			s.logMu.Lock()
			s.log.WriteString(sc.Text() + "\n")
			s.logMu.Unlock()
		}
	}()
}

// restartDocket stops docket, runs fn while the embedded ledger is free
// for other processes, and starts docket again.
func (s *stack) restartDocket(fn func()) {
	s.t.Helper()
	stop(s.docket)
	fn()
	s.startDocket()
	waitHTTP(s.t, s.uiURL+"/healthz")
}

func (s *stack) logText() string {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.log.String()
}

func stop(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func waitHTTP(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s did not answer", url)
}

// ask sends one question through the example app, like a customer would,
// and returns the trace ID it answers with.
func (s *stack) ask(user, question string) string {
	s.t.Helper()
	body, _ := json.Marshal(map[string]string{"user": user, "question": question})
	resp, err := http.Post(s.appURL+"/ask", "application/json", bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		TraceID string `json:"trace_id"`
		Error   string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("ask: %s %v %s", resp.Status, err, out.Error)
	}
	return out.TraceID
}

// flush stops the example app, whose batch span processor sends what it
// holds on exit.
func (s *stack) flush() { stop(s.llmapp) }

// users adds an account with docket's CLI, as an operator would, and
// returns its one-time password.
func (s *stack) addUser(name, grant string) string {
	s.t.Helper()
	out, err := exec.Command(s.bin, "ui", "users", "add", name, "--grant", grant, "--data", s.data).CombinedOutput()
	if err != nil {
		s.t.Fatalf("users add: %v\n%s", err, out)
	}
	_, pw, ok := strings.Cut(strings.TrimSpace(string(out)), "first sign-in): ")
	if !ok {
		s.t.Fatalf("users add printed no password: %s", out)
	}
	return pw
}

// waitEvidence polls the API as admin until the trace has its call row.
func (s *stack) waitEvidence(c *apiclient.Client, traceID string) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var ev struct {
			Calls []json.RawMessage `json:"calls"`
		}
		if err := c.Get(context.Background(), "/api/v1/evidence/"+traceID, &ev); err == nil && len(ev.Calls) > 0 {
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	s.t.Fatalf("trace %s never reached the ledger\n%s", traceID, s.logText())
}

// sendToolSpan sends, over OTLP, a tool execution span of the trace whose
// arguments are content, as an agent's instrumentation would.
func (s *stack) sendToolSpan(traceID, arguments string) {
	s.t.Helper()
	var id pcommon.TraceID
	if _, err := hex.Decode(id[:], []byte(traceID)); err != nil {
		s.t.Fatal(err)
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.ServiceName, "support-bot")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(id)
	sp.SetSpanID(pcommon.SpanID{0x70, 0x01, 0x70, 0x01, 0x70, 0x01, 0x70, 0x01})
	sp.SetName("execute_tool lookup_account")
	now := time.Now()
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(20 * time.Millisecond)))
	sp.Attributes().PutStr(conventions.OperationName, "execute_tool")
	sp.Attributes().PutStr("gen_ai.tool.name", "lookup_account")
	sp.Attributes().PutStr("gen_ai.tool.call.arguments", arguments)
	s.export(td)
}

// sendForgedCall re-sends a recorded call's span key over OTLP from
// another service with another response model, as an attacker who can
// reach the OTLP port would.
func (s *stack) sendForgedCall(c ledger.Call) {
	s.t.Helper()
	var tid pcommon.TraceID
	var sid pcommon.SpanID
	if _, err := hex.Decode(tid[:], []byte(c.TraceID)); err != nil {
		s.t.Fatal(err)
	}
	if _, err := hex.Decode(sid[:], []byte(c.SpanID)); err != nil {
		s.t.Fatal(err)
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.ServiceName, "intruder")
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(tid)
	sp.SetSpanID(sid)
	sp.SetName("chat")
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(c.StartTime))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(c.EndTime))
	sp.Attributes().PutStr(conventions.OperationName, "chat")
	sp.Attributes().PutStr(conventions.ProviderName, c.Provider)
	sp.Attributes().PutStr(conventions.RequestModel, c.RequestModel)
	sp.Attributes().PutStr(conventions.ResponseModel, "attacker-model")
	s.export(td)
}

// export sends spans to the collector over OTLP/gRPC.
func (s *stack) export(td ptrace.Traces) {
	s.t.Helper()
	conn, err := grpc.NewClient(s.otlp, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		s.t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := ptraceotlp.NewGRPCClient(conn).Export(ctx, ptraceotlp.NewExportRequestFromTraces(td)); err != nil {
		s.t.Fatal(err)
	}
}

// waitConflicts polls the API as c until the trace lists n conflicts.
func (s *stack) waitConflicts(c *apiclient.Client, traceID string, n int) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var ev struct {
			Conflicts []ledgerstore.Conflict `json:"conflicts"`
		}
		if err := c.Get(context.Background(), "/api/v1/evidence/"+traceID, &ev); err == nil && len(ev.Conflicts) >= n {
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
	s.t.Fatalf("trace %s never showed %d conflicts\n%s", traceID, n, s.logText())
}

// waitSpanContent waits until the trace's evidence lists a span with
// content references.
func (s *stack) waitSpanContent(c *apiclient.Client, traceID string) {
	s.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var ev struct {
			EvidenceSpans []struct {
				ContentRefs []string `json:"content_refs"`
			} `json:"evidence_spans"`
		}
		if err := c.Get(context.Background(), "/api/v1/evidence/"+traceID, &ev); err == nil {
			for _, sp := range ev.EvidenceSpans {
				if len(sp.ContentRefs) > 0 {
					return
				}
			}
		}
		time.Sleep(300 * time.Millisecond)
	}
	s.t.Fatalf("no span content of trace %s reached the ledger\n%s", traceID, s.logText())
}
