package main

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/docketlabs/docket/fakeprovider"
)

// recordingProvider serves the fake provider and keeps every body it sent,
// so tests compare span attributes with what the provider really answered.
type recordingProvider struct {
	handler http.Handler
	mu      sync.Mutex
	bodies  [][]byte
}

func (p *recordingProvider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	p.handler.ServeHTTP(rec, r)
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	p.mu.Lock()
	p.bodies = append(p.bodies, rec.Body.Bytes())
	p.mu.Unlock()
}

func (p *recordingProvider) last(t *testing.T) []byte {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.bodies) == 0 {
		t.Fatal("the provider was not called")
	}
	return p.bodies[len(p.bodies)-1]
}

type testEnv struct {
	srv      *httptest.Server
	spans    *tracetest.InMemoryExporter
	provider *recordingProvider
	app      *app
}

// newTestEnv runs the app in-process against the fake provider, exporting
// spans synchronously to memory. change adjusts the app's configuration.
func newTestEnv(t *testing.T, providerCfg fakeprovider.Config, workers int, change func(*appConfig)) *testEnv {
	t.Helper()
	fp, err := fakeprovider.New(providerCfg)
	if err != nil {
		t.Fatal(err)
	}
	provider := &recordingProvider{handler: fp}
	providerSrv := httptest.NewServer(provider)
	t.Cleanup(providerSrv.Close)

	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })

	cfg := appConfig{
		TracerProvider: tp,
		Propagator:     propagation.TraceContext{},
		ProviderURL:    providerSrv.URL + "/v1",
		Model:          "gpt-4o-mini",
		CaptureContent: true,
		PseudonymKey:   []byte("test key"),
		QueueSize:      4,
		JobTimeout:     5 * time.Second,
		Customers:      20,
	}
	if change != nil {
		change(&cfg)
	}
	a, err := newApp(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { a.work(ctx) })
	}
	srv := httptest.NewServer(a.handler())
	t.Cleanup(func() {
		srv.Close()
		cancel()
		wg.Wait()
	})
	return &testEnv{srv: srv, spans: spans, provider: provider, app: a}
}

func (e *testEnv) ask(t *testing.T, body string) (*http.Response, askResponse) {
	t.Helper()
	resp, err := e.srv.Client().Post(e.srv.URL+"/ask", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out askResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decode /ask response: %v", err)
	}
	return resp, out
}

// traceSpans waits for the server span of the trace to end (it ends last,
// after the response is written) and returns the trace's spans by name.
func (e *testEnv) traceSpans(t *testing.T, traceID string) map[string]tracetest.SpanStub {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		byName := map[string]tracetest.SpanStub{}
		for _, s := range e.spans.GetSpans() {
			if s.SpanContext.TraceID().String() == traceID {
				if _, dup := byName[s.Name]; dup {
					t.Fatalf("two spans named %q in one trace", s.Name)
				}
				byName[s.Name] = s
			}
		}
		if _, ok := byName["POST /ask"]; ok {
			return byName
		}
		if time.Now().After(deadline) {
			t.Fatalf("no server span for trace %s; have %d spans", traceID, len(e.spans.GetSpans()))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func attrs(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(s.Attributes))
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// providerResponse is the provider's answer as the test reads it, independently of the app.
type providerResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

const passwordQuestion = `{"user":"User0007@Example.com","question":"How do I reset my password?"}`

func TestAskTraceIsOneLinkedTree(t *testing.T) {
	env := newTestEnv(t, fakeprovider.Config{}, 2, nil)
	resp, out := env.ask(t, passwordQuestion)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %+v", resp.StatusCode, out)
	}
	var provided providerResponse
	if err := json.Unmarshal(env.provider.last(t), &provided); err != nil {
		t.Fatal(err)
	}
	if out.Answer != provided.Choices[0].Message.Content || out.ResponseID != provided.ID || out.Model != provided.Model {
		t.Errorf("/ask answered %+v, provider sent %+v", out, provided)
	}

	spans := env.traceSpans(t, out.TraceID)
	server, producer, worker, db, retrieval, chat, httpClient := spans["POST /ask"], spans["send ask-jobs"], spans["process ask-jobs"],
		spans["SELECT customers"], spans["retrieval support-kb"], spans["chat gpt-4o-mini"], spans["HTTP POST"]
	if len(spans) != 7 {
		t.Fatalf("trace has spans %v, want 7", slices.Sorted(maps.Keys(spans)))
	}
	if got := resp.Header.Get("traceresponse"); got != "00-"+out.TraceID+"-"+server.SpanContext.SpanID().String()+"-01" {
		t.Errorf("traceresponse %q, server span %s", got, server.SpanContext.SpanID())
	}

	// Parenting: server → producer → worker → {db, retrieval, chat → provider HTTP call}.
	for _, link := range []struct {
		child, parent tracetest.SpanStub
		kind          trace.SpanKind
	}{
		{producer, server, trace.SpanKindProducer},
		{worker, producer, trace.SpanKindConsumer},
		{db, worker, trace.SpanKindClient},
		{retrieval, worker, trace.SpanKindClient},
		{chat, worker, trace.SpanKindClient},
		{httpClient, chat, trace.SpanKindClient},
	} {
		if link.child.Parent.SpanID() != link.parent.SpanContext.SpanID() {
			t.Errorf("%s: parent %s, want %s (%s)", link.child.Name, link.child.Parent.SpanID(), link.parent.SpanContext.SpanID(), link.parent.Name)
		}
		if link.child.SpanKind != link.kind {
			t.Errorf("%s: kind %v, want %v", link.child.Name, link.child.SpanKind, link.kind)
		}
	}
	if server.Parent.IsValid() || server.SpanKind != trace.SpanKindServer {
		t.Errorf("server span: parent %v kind %v", server.Parent, server.SpanKind)
	}

	c := attrs(chat)
	for key, want := range map[attribute.Key]attribute.Value{
		"gen_ai.operation.name":                attribute.StringValue("chat"),
		"gen_ai.provider.name":                 attribute.StringValue("openai"),
		"gen_ai.request.model":                 attribute.StringValue("gpt-4o-mini"),
		"gen_ai.request.temperature":           attribute.Float64Value(0.2),
		"gen_ai.request.top_p":                 attribute.Float64Value(1),
		"gen_ai.request.max_tokens":            attribute.IntValue(300),
		"gen_ai.request.seed":                  attribute.IntValue(42),
		"gen_ai.response.model":                attribute.StringValue(provided.Model),
		"gen_ai.response.id":                   attribute.StringValue(provided.ID),
		"gen_ai.response.finish_reasons":       attribute.StringSliceValue([]string{provided.Choices[0].FinishReason}),
		"gen_ai.usage.input_tokens":            attribute.IntValue(provided.Usage.PromptTokens),
		"gen_ai.usage.output_tokens":           attribute.IntValue(provided.Usage.CompletionTokens),
		"gen_ai.usage.cache_read.input_tokens": attribute.IntValue(provided.Usage.PromptTokensDetails.CachedTokens),
		"server.address":                       attribute.StringValue("127.0.0.1"),
		"enduser.pseudo.id":                    attribute.StringValue(env.app.pseudonym("user0007@example.com")),
	} {
		if got := c[key]; got != want {
			t.Errorf("chat span %s = %v, want %v", key, got.String(), want.String())
		}
	}
	if provided.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("provider answered with model %q, want the snapshot", provided.Model)
	}

	// Content, in the conventions' parts format.
	var input []inputMessage
	var output []outputMessage
	var system []textPart
	mustUnmarshal(t, c["gen_ai.input.messages"].AsString(), &input)
	mustUnmarshal(t, c["gen_ai.output.messages"].AsString(), &output)
	mustUnmarshal(t, c["gen_ai.system_instructions"].AsString(), &system)
	if len(input) != 1 || input[0].Role != "user" || !strings.Contains(input[0].Parts[0].Content, "How do I reset my password?") {
		t.Errorf("gen_ai.input.messages = %+v", input)
	}
	if len(output) != 1 || output[0].Parts[0].Content != provided.Choices[0].Message.Content || output[0].FinishReason != "stop" {
		t.Errorf("gen_ai.output.messages = %+v", output)
	}
	if len(system) != 1 || system[0].Content != instructions {
		t.Errorf("gen_ai.system_instructions = %+v", system)
	}

	d := attrs(db)
	query := d["db.query.text"].AsString()
	if !strings.Contains(query, "'user0007@example.com'") || !strings.Contains(query, ">= 1") {
		t.Errorf("db.query.text %q lacks the literals", query)
	}
	for key, want := range map[attribute.Key]attribute.Value{
		"db.system.name":            attribute.StringValue("postgresql"),
		"db.operation.name":         attribute.StringValue("SELECT"),
		"db.collection.name":        attribute.StringValue("customers"),
		"db.response.returned_rows": attribute.IntValue(1),
	} {
		if got := d[key]; got != want {
			t.Errorf("db span %s = %v, want %v", key, got.String(), want.String())
		}
	}

	r := attrs(retrieval)
	var docs []struct {
		ID      string  `json:"id"`
		Version string  `json:"version"`
		Score   float64 `json:"score"`
	}
	mustUnmarshal(t, r["gen_ai.retrieval.documents"].AsString(), &docs)
	if r["gen_ai.operation.name"].AsString() != "retrieval" || r["gen_ai.data_source.id"].AsString() != "support-kb" {
		t.Errorf("retrieval span attributes %v", r)
	}
	if len(docs) == 0 || docs[0].ID != "doc-3" || docs[0].Version != "v2" || docs[0].Score <= 0 {
		t.Errorf("gen_ai.retrieval.documents = %+v, want doc-3 v2 first", docs)
	}
	if !strings.Contains(input[0].Parts[0].Content, "[doc-3 v2]") {
		t.Errorf("the prompt does not carry the retrieved article: %q", input[0].Parts[0].Content)
	}

	if got := attrs(server)["http.route"].AsString(); got != "/ask" {
		t.Errorf("http.route %q", got)
	}
}

func mustUnmarshal(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%q is not the expected JSON: %v", s, err)
	}
}

func TestProviderFailureIsRecorded(t *testing.T) {
	for wantType, apiErr := range map[string]*fakeprovider.APIError{
		"rate_limit_exceeded": fakeprovider.RateLimited(time.Second),
		"500":                 fakeprovider.ServerError(),
		"503":                 fakeprovider.Overloaded(),
	} {
		t.Run(wantType, func(t *testing.T) {
			fail := func(context.Context, *fakeprovider.Request) (fakeprovider.Reply, error) {
				return fakeprovider.Reply{}, apiErr
			}
			env := newTestEnv(t, fakeprovider.Config{Responder: fail}, 1, nil)
			resp, out := env.ask(t, passwordQuestion)
			if resp.StatusCode != http.StatusBadGateway || out.TraceID == "" || out.Answer != "" {
				t.Fatalf("status %d, %+v", resp.StatusCode, out)
			}
			spans := env.traceSpans(t, out.TraceID)
			for _, name := range []string{"chat gpt-4o-mini", "process ask-jobs"} {
				s := spans[name]
				if s.Status.Code != codes.Error || attrs(s)["error.type"].AsString() != wantType {
					t.Errorf("%s: status %v, error.type %q", name, s.Status, attrs(s)["error.type"].AsString())
				}
			}
			for key := range attrs(spans["chat gpt-4o-mini"]) {
				if strings.HasPrefix(string(key), "gen_ai.usage.") || strings.HasPrefix(string(key), "gen_ai.response.") {
					t.Errorf("failed call records %s", key)
				}
			}
			if spans["POST /ask"].Status.Code != codes.Error {
				t.Errorf("server span status %v for a 502", spans["POST /ask"].Status)
			}
		})
	}
}

func TestMissingUsageLeavesTokenAttributesUnset(t *testing.T) {
	env := newTestEnv(t, fakeprovider.Config{MissingUsageRate: 1}, 1, nil)
	resp, out := env.ask(t, passwordQuestion)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	chat := attrs(env.traceSpans(t, out.TraceID)["chat gpt-4o-mini"])
	for key := range chat {
		if strings.HasPrefix(string(key), "gen_ai.usage.") {
			t.Errorf("usage was not reported, yet the span has %s = %v", key, chat[key].String())
		}
	}
	if chat["gen_ai.response.id"].AsString() == "" {
		t.Error("response id missing")
	}
}

func TestProviderTimeout(t *testing.T) {
	hang := func(ctx context.Context, _ *fakeprovider.Request) (fakeprovider.Reply, error) {
		<-ctx.Done()
		return fakeprovider.Reply{}, ctx.Err()
	}
	env := newTestEnv(t, fakeprovider.Config{Responder: hang}, 1, func(c *appConfig) { c.JobTimeout = 200 * time.Millisecond })
	resp, out := env.ask(t, passwordQuestion)
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Fatalf("status %d, %+v", resp.StatusCode, out)
	}
	chat := env.traceSpans(t, out.TraceID)["chat gpt-4o-mini"]
	if got := attrs(chat)["error.type"].AsString(); got != "timeout" {
		t.Errorf("error.type %q", got)
	}
}

func TestUnknownCustomer(t *testing.T) {
	env := newTestEnv(t, fakeprovider.Config{}, 1, nil)
	resp, out := env.ask(t, `{"user":"stranger@example.com","question":"How do I reset my password?"}`)
	if resp.StatusCode != http.StatusNotFound || strings.Contains(out.Error, "stranger") {
		t.Fatalf("status %d, %+v", resp.StatusCode, out)
	}
	spans := env.traceSpans(t, out.TraceID)
	if _, called := spans["chat gpt-4o-mini"]; called {
		t.Error("the model was asked for an unknown customer")
	}
	if got := attrs(spans["SELECT customers"])["db.response.returned_rows"]; got != attribute.IntValue(0) {
		t.Errorf("returned_rows %v", got.String())
	}
	if got := attrs(spans["process ask-jobs"])["error.type"].AsString(); got != "unknown_customer" {
		t.Errorf("worker error.type %q", got)
	}
}

func TestContentCaptureOff(t *testing.T) {
	env := newTestEnv(t, fakeprovider.Config{}, 1, func(c *appConfig) { c.CaptureContent = false })
	_, out := env.ask(t, passwordQuestion)
	spans := env.traceSpans(t, out.TraceID)
	chat, retrieval := attrs(spans["chat gpt-4o-mini"]), attrs(spans["retrieval support-kb"])
	for _, key := range []attribute.Key{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"} {
		if _, ok := chat[key]; ok {
			t.Errorf("content capture is off, yet the chat span has %s", key)
		}
	}
	if _, ok := retrieval["gen_ai.retrieval.query.text"]; ok {
		t.Error("content capture is off, yet the retrieval span has the query text")
	}
	if _, ok := chat["gen_ai.usage.input_tokens"]; !ok {
		t.Error("usage must be recorded without content capture")
	}
	if _, ok := retrieval["gen_ai.retrieval.documents"]; !ok {
		t.Error("document ids must be recorded without content capture")
	}
}

// TestUnsampledQuestionBuildsNoContent: a span the sampler left out drops
// its attributes, so the app must not spend the content's JSON on it; an
// untraced app that did would make tracing look cheaper than it is.
func TestUnsampledQuestionBuildsNoContent(t *testing.T) {
	allocs := func(capture bool) float64 {
		env := newTestEnv(t, fakeprovider.Config{}, 0, func(c *appConfig) {
			c.CaptureContent = capture
			c.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
		})
		j := job{ask: askRequest{User: "user0007@example.com", Question: "How do I reset my password?"}, endUser: "u7"}
		return testing.AllocsPerRun(200, func() {
			if _, err := env.app.answer(context.Background(), j); err != nil {
				t.Fatal(err)
			}
		})
	}
	off, on := allocs(false), allocs(true)
	t.Logf("allocations per unsampled question, content capture off / on: %.1f / %.1f", off, on)
	if on > off+1 {
		t.Errorf("an unsampled question allocates %.1f times with content capture on, %.1f with it off: the content is built for nothing", on, off)
	}
}

func TestRejectedAsks(t *testing.T) {
	env := newTestEnv(t, fakeprovider.Config{}, 1, nil)
	secret := "s3cr3t-value"
	for _, tc := range []struct {
		name   string
		body   string
		status int
	}{
		{"not JSON", `{"user":` + secret, 400},
		{"no user", `{"question":"` + secret + `"}`, 400},
		{"user not an email", `{"user":"` + secret + `","question":"hi"}`, 400},
		{"user with space", `{"user":"a b@example.com","question":"hi"}`, 400},
		{"empty question", `{"user":"user0001@example.com","question":"  "}`, 400},
		{"NUL in question", `{"user":"user0001@example.com","question":"a\u0000` + secret + `"}`, 400},
		{"invalid UTF-8", "{\"user\":\"user0001@example.com\",\"question\":\"\xff\xfe" + secret + "\"}", 400},
		{"question too long", `{"user":"user0001@example.com","question":"` + strings.Repeat("x", maxQuestionBytes+1) + `"}`, 400},
		{"body too large", `{"user":"user0001@example.com","question":"` + strings.Repeat("x", maxAskBody) + `"}`, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, out := env.ask(t, tc.body)
			if resp.StatusCode != tc.status || out.Error == "" || out.TraceID == "" {
				t.Fatalf("status %d, %+v", resp.StatusCode, out)
			}
			if strings.Contains(out.Error, secret) || strings.Contains(out.Error, "xxx") {
				t.Errorf("error quotes the input: %q", out.Error)
			}
			if _, queued := env.traceSpans(t, out.TraceID)["process ask-jobs"]; queued {
				t.Error("a rejected request reached a worker")
			}
		})
	}
}

func TestQueueFullAnswers503(t *testing.T) {
	env := newTestEnv(t, fakeprovider.Config{}, 0, func(c *appConfig) { c.QueueSize = 0 })
	resp, out := env.ask(t, passwordQuestion)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || out.TraceID == "" {
		t.Fatalf("status %d, Retry-After %q, %+v", resp.StatusCode, resp.Header.Get("Retry-After"), out)
	}
}

func TestPseudonym(t *testing.T) {
	a := &app{pseudoKey: []byte("key one")}
	b := &app{pseudoKey: []byte("key two")}
	p := a.pseudonym("user0001@example.com")
	if p != a.pseudonym("user0001@example.com") {
		t.Error("pseudonym is not stable")
	}
	if p == a.pseudonym("user0002@example.com") || p == b.pseudonym("user0001@example.com") {
		t.Error("pseudonym does not depend on both user and key")
	}
	if strings.Contains(p, "user0001") || len(p) != 22 {
		t.Errorf("pseudonym %q", p)
	}
}

func TestRetrievalRanksByOverlap(t *testing.T) {
	kb := newKnowledgeBase("kb", sdktrace.NewTracerProvider().Tracer("test"), false)
	for question, wantFirst := range map[string]string{
		"How can I export my data as CSV?":      "doc-12",
		"What is the refund policy for annual?": "doc-9",
		"invite a member to my team":            "doc-21",
	} {
		hits, err := kb.search(context.Background(), question, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != wantFirst {
			t.Errorf("%q: hits %+v, want %s first", question, hits, wantFirst)
		}
		for i := 1; i < len(hits); i++ {
			if hits[i].Score > hits[i-1].Score {
				t.Errorf("%q: hits not sorted by score: %+v", question, hits)
			}
		}
	}
	if hits, _ := kb.search(context.Background(), "zzz qqq", 3); len(hits) != 0 {
		t.Errorf("unrelated query found %+v", hits)
	}
}

// FuzzDecodeAsk: any body gives a checked request or a clear 4xx, and a
// request that passes is clean text within the limits.
func FuzzDecodeAsk(f *testing.F) {
	f.Add([]byte(passwordQuestion))
	f.Add([]byte(`{"user":"a@b","question":"x\u0000"}`))
	f.Add([]byte("{\"user\":\"a@b\",\"question\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		ask, status, err := decodeAsk(rec, httptest.NewRequest(http.MethodPost, "/ask", bytes.NewReader(body)))
		if err != nil {
			if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge {
				t.Fatalf("error %v with status %d", err, status)
			}
			return
		}
		if !cleanText(ask.User) || !cleanText(ask.Question) || ask.Question == "" || len(ask.Question) > maxQuestionBytes || !strings.Contains(ask.User, "@") {
			t.Fatalf("accepted %+v", ask)
		}
	})
}

// The profiles are served by their own handler, not the app's.
func TestPprofOnlyOnItsOwnHandler(t *testing.T) {
	e := newTestEnv(t, fakeprovider.Config{}, 1, nil)
	prof := httptest.NewServer(pprofHandler())
	t.Cleanup(prof.Close)
	for _, c := range []struct {
		base string
		want int
	}{{prof.URL, http.StatusOK}, {e.srv.URL, http.StatusNotFound}} {
		resp, err := http.Get(c.base + "/debug/pprof/heap?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("GET %s/debug/pprof/heap: %d, want %d", c.base, resp.StatusCode, c.want)
		}
	}
}
