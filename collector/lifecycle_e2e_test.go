package collector_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/s3test"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/storage/chdb"
)

// lifecycleUsers are the end users of TestContentOfEveryShapeIsDeletedAndHeld:
// a is held, b asks for deletion, c is left to retention.
var lifecycleUsers = []string{"a", "b", "c"}

// contentShapes are the ways content arrives that no reference column of
// the call row names: log records carrying the call span's context
// (instrumentation-openai), a span event (the older GenAI form), an
// OpenInference LLM span's llm.prompts (a second instrumentation's span of
// the call) and an OpenInference embedding call's inputs.
var contentShapes = []string{"log-user-message", "log-choice", "span-event", "oi-prompts", "oi-embedding"}

func lifecycleCanary(user, shape string) string {
	return "canary-" + shape + "-of-user-" + user + "-7f3a"
}

// lifecycleTraceID is user's trace.
func lifecycleTraceID(user string) pcommon.TraceID {
	return pcommon.TraceID{0x1f, 0xe, user[0], 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}
}

func lifecycleTelemetry(user string) (ptrace.Traces, plog.Logs) {
	now := time.Now()
	trace := lifecycleTraceID(user)
	callID := pcommon.SpanID{0xca, user[0], 1, 1, 1, 1, 1, 1}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.ServiceName, "support-bot")
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	span := func(scope, name string, id, parent pcommon.SpanID, attrs map[string]any) ptrace.Span {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(scope)
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(trace)
		s.SetSpanID(id)
		s.SetParentSpanID(parent)
		s.SetName(name)
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Second)))
		if err := s.Attributes().FromRaw(attrs); err != nil {
			panic(err)
		}
		return s
	}
	call := span("@opentelemetry/instrumentation-openai", "chat gpt-4o", callID, pcommon.SpanID{}, map[string]any{
		conventions.OperationName: "chat", conventions.ProviderName: "openai", conventions.RequestModel: "gpt-4o", conventions.EndUser: "user-" + user})
	ev := call.Events().AppendEmpty()
	ev.SetName("gen_ai.content.prompt")
	ev.Attributes().PutStr(conventions.Prompt, lifecycleCanary(user, "span-event"))
	span("@arizeai/openinference-instrumentation-openai", "OpenAI Chat Completions", pcommon.SpanID{0x01, user[0], 2, 2, 2, 2, 2, 2}, callID, map[string]any{
		conventions.OpenInferenceKind: "LLM", "llm.provider": "openai", "llm.model_name": "gpt-4o",
		"llm.prompts": []any{lifecycleCanary(user, "oi-prompts")}})
	span("@arizeai/openinference-instrumentation-openai", "OpenAI Embeddings", pcommon.SpanID{0xe3, user[0], 3, 3, 3, 3, 3, 3}, pcommon.SpanID{}, map[string]any{
		conventions.OpenInferenceKind: "EMBEDDING", "embedding.model_name": "text-embedding-3-small", conventions.EndUser: "user-" + user,
		"embedding.embeddings.0.embedding.text": lifecycleCanary(user, "oi-embedding")})

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rs.Resource().Attributes().CopyTo(rl.Resource().Attributes())
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("@opentelemetry/instrumentation-openai")
	for _, r := range []struct{ event, body string }{
		{"gen_ai.user.message", `{"content":"` + lifecycleCanary(user, "log-user-message") + `"}`},
		{"gen_ai.choice", `{"index":0,"finish_reason":"stop","message":{"content":"` + lifecycleCanary(user, "log-choice") + `"}}`},
	} {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTraceID(trace)
		lr.SetSpanID(callID)
		lr.SetEventName(r.event)
		lr.SetTimestamp(pcommon.NewTimestampFromTime(now))
		lr.Attributes().PutStr(conventions.System, "openai")
		var body map[string]any
		if err := json.Unmarshal([]byte(r.body), &body); err != nil {
			panic(err)
		}
		if err := lr.Body().SetEmptyMap().FromRaw(body); err != nil {
			panic(err)
		}
	}
	return td, ld
}

// TestContentOfEveryShapeIsDeletedAndHeld sends, over OTLP into the
// collector (contentref to a real S3 server with Object Lock, the ledger on
// real chDB, on the traces and the logs pipeline), content in every shape
// no reference column names, for three end users; then, on what the
// collector recorded: every canary is retrievable through its call; a hold
// on a holds all of a's objects in the store; b's deletion request deletes
// all of b's and nothing else; a's waits for the hold; an expiry run past
// content retention takes c's and not a's; releasing the hold runs a's
// deletion.
func TestContentOfEveryShapeIsDeletedAndHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	s3 := s3test.Start(t)
	const secret = "e2e-lifecycle-secret-0123456789abcdef"
	env := []string{"E2E_CONTENT_SECRET=" + secret, "E2E_S3_ENDPOINT=" + s3.Endpoint, "E2E_S3_ACCESS_KEY=" + s3.AccessKey, "E2E_S3_SECRET_KEY=" + s3.SecretKey}
	p := newCollectorProc(t, docketBinary(t), "lifecycle-e2e.yaml", env...)
	p.start()
	logsURL := strings.Replace(p.otlpURL, "/v1/traces", "/v1/logs", 1)
	for _, u := range lifecycleUsers {
		td, ld := lifecycleTelemetry(u)
		// Log records first: they usually reach the collector before the
		// span they belong to ends.
		body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		sendBody(t, logsURL, body)
		send(t, p.otlpURL, td)
	}
	// The queues are in memory and drain at shutdown.
	p.signal(syscall.SIGTERM)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperLifecycleE2E$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, "E2E_LIFECYCLE_LEDGER="+filepath.Join(p.dir, "ledger"))...)
	out, err := cmd.CombinedOutput()
	t.Logf("lifecycle process:\n%s", out)
	if err != nil {
		t.Fatalf("lifecycle on the collector's records: %v", err)
	}
}

// TestHelperLifecycleE2E is the child process of
// TestContentOfEveryShapeIsDeletedAndHeld (chDB allows one data directory
// per process): it runs the lifecycle on the stopped collector's ledger and
// the S3 store.
func TestHelperLifecycleE2E(t *testing.T) {
	dir := os.Getenv("E2E_LIFECYCLE_LEDGER")
	if dir == "" {
		t.Skip("runs only as the lifecycle process of TestContentOfEveryShapeIsDeletedAndHeld")
	}
	ctx := context.Background()
	eng, err := chdb.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	l := ledgerstore.New(eng)
	cfg := contentstore.NewDefaultConfig()
	cfg.Directory = configoptional.None[contentstore.DirConfig]()
	cfg.S3 = configoptional.Some(contentstore.S3Config{Endpoint: os.Getenv("E2E_S3_ENDPOINT"), Bucket: "docket-lifecycle",
		AccessKey: os.Getenv("E2E_S3_ACCESS_KEY"), SecretKey: configopaque.String(os.Getenv("E2E_S3_SECRET_KEY")),
		Insecure: true, ObjectLock: true, Timeout: 10 * time.Second})
	cfg.Secret = configopaque.String(os.Getenv("E2E_CONTENT_SECRET"))
	store, err := contentstore.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	m, err := lifecycle.New(l, store, lifecycle.Options{})
	if err != nil {
		t.Fatal(err)
	}
	admin := lifecycle.SystemPrincipal

	// Every canary of a user is retrievable through the references of
	// that user's calls, the ledger's one set per call.
	refs := map[string][]contentstore.Ref{}
	for _, u := range lifecycleUsers {
		calls, err := l.CallsByTrace(ctx, lifecycleTraceID(u).String())
		if err != nil {
			t.Fatal(err)
		}
		var content strings.Builder
		for _, c := range calls {
			for _, s := range c.Refs() {
				r, err := contentstore.ParseRef(s)
				if err != nil {
					t.Fatalf("call %s: reference %q: %v", c.SpanID, s, err)
				}
				b, err := store.Get(ctx, r)
				if err != nil {
					t.Fatalf("get %s: %v", s, err)
				}
				content.Write(b)
				refs[u] = append(refs[u], r)
			}
		}
		for _, shape := range contentShapes {
			if !strings.Contains(content.String(), lifecycleCanary(u, shape)) {
				t.Errorf("user %s: the %s canary is not reachable through the calls (%d calls, %d references)", u, shape, len(calls), len(refs[u]))
			}
		}
		t.Logf("user %s: %d calls, %d references, every shape reachable", u, len(calls), len(refs[u]))
	}
	if t.Failed() {
		t.FailNow()
	}
	exists := func(r contentstore.Ref) bool {
		_, err := store.Get(ctx, r)
		if err != nil && !errors.Is(err, contentstore.ErrNotFound) {
			t.Fatalf("get %s: %v", r, err)
		}
		return err == nil
	}
	want := func(step string, present map[string]bool) {
		t.Helper()
		for u, rs := range refs {
			for _, r := range rs {
				if exists(r) != present[u] {
					t.Errorf("%s: user %s's object %s present %v, want %v", step, u, r.Kind, !present[u], present[u])
				}
			}
		}
	}

	hold, applied, err := m.CreateHold(ctx, admin, lifecycle.HoldRequest{Scope: lifecycle.Scope{Tenant: "acme", EndUserRef: "user-a"}, Reason: "litigation 2026-17"})
	if err != nil || applied.ObjectsHeld != uint64(len(refs["a"])) {
		t.Fatalf("hold on a: %+v %v, want %d objects held", applied, err, len(refs["a"]))
	}
	for _, r := range refs["a"] {
		if held, err := store.LegalHold(ctx, r); err != nil || !held {
			t.Errorf("the S3 store does not hold a's %s object (%v)", r.Kind, err)
		}
	}
	jobB, err := m.RequestDeletion(ctx, admin, lifecycle.DeletionRequest{Scope: lifecycle.Scope{Tenant: "acme", EndUserRef: "user-b"}, Reason: "erasure request"})
	if err != nil || jobB.Status != lifecycle.JobDone || jobB.Counts.ObjectsDeleted != uint64(len(refs["b"])) {
		t.Fatalf("b's deletion: %+v %v", jobB, err)
	}
	want("after b's deletion request", map[string]bool{"a": true, "c": true})
	jobA, err := m.RequestDeletion(ctx, admin, lifecycle.DeletionRequest{Scope: lifecycle.Scope{Tenant: "acme", EndUserRef: "user-a"}, Reason: "erasure request"})
	if err != nil || jobA.Status != lifecycle.JobBlocked || jobA.Counts.ObjectsHeld != uint64(len(refs["a"])) {
		t.Fatalf("a's deletion under hold: %+v %v", jobA, err)
	}
	want("after a's deletion request under hold", map[string]bool{"a": true, "c": true})
	run, err := m.Expire(ctx, admin, lifecycle.ExpireOptions{Now: time.Now().Add(100 * 24 * time.Hour), Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("expiry past content retention: %+v", run.ExpiryCounts)
	want("after expiry under hold", map[string]bool{"a": true})
	if _, err := m.ReleaseHold(ctx, admin, hold.ID, "case closed"); err != nil {
		t.Fatal(err)
	}
	want("after the release", map[string]bool{})
	report, err := m.Orphans(ctx, admin, lifecycle.OrphanOptions{Grace: time.Nanosecond})
	if err != nil || report.Orphans != 0 {
		t.Errorf("orphans left: %+v %v", report, err)
	}
}
