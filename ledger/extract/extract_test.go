package extract

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/pricing"
)

func testSpanOnly(attrs map[string]any) ptrace.Span {
	_, span := testSpan(attrs)
	return span
}

func testSpan(attrs map[string]any) (pcommon.Resource, ptrace.Span) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.ServiceName, "support-bot")
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetTraceID(pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	span.SetSpanID(pcommon.SpanID{1, 1, 1, 1, 1, 1, 1, 1})
	span.SetParentSpanID(pcommon.SpanID{2, 2, 2, 2, 2, 2, 2, 2})
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(1500 * time.Millisecond)))
	span.SetName("chat gpt-4o")
	if err := span.Attributes().FromRaw(attrs); err != nil {
		panic(err)
	}
	return rs.Resource(), span
}

// evidenceOf is the evidence row Extract makes of a span, if any.
func evidenceOf(x *Extractor, res pcommon.Resource, span ptrace.Span, at time.Time) (ledger.EvidenceSpan, bool) {
	_, e, kind := x.Extract(res, "", span, at)
	return e, kind == KindEvidence
}

func testExtractor(t testing.TB) *Extractor {
	prices, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	return &Extractor{DefaultTenant: "default", Prices: prices}
}

func TestIsLLMCall(t *testing.T) {
	cases := []struct {
		name  string
		attrs map[string]any
		want  bool
	}{
		{"chat", map[string]any{conventions.OperationName: "chat"}, true},
		{"embeddings", map[string]any{conventions.OperationName: "embeddings"}, true},
		{"tool", map[string]any{conventions.OperationName: "execute_tool", conventions.RequestModel: "x"}, false},
		{"agent", map[string]any{conventions.OperationName: "invoke_agent", conventions.RequestModel: "x"}, false},
		{"retrieval", map[string]any{conventions.OperationName: "retrieval"}, false},
		{"unknown op with model", map[string]any{conventions.OperationName: "rerank", conventions.RequestModel: "x"}, true},
		{"unknown op without model", map[string]any{conventions.OperationName: "rerank"}, false},
		{"legacy system+model", map[string]any{conventions.System: "openai", conventions.RequestModel: "gpt-4"}, true},
		{"legacy system only", map[string]any{conventions.System: "openai"}, false},
		{"db span", map[string]any{conventions.DBSystemName: "postgresql"}, false},
		{"openinference llm", map[string]any{conventions.OpenInferenceKind: "LLM"}, true},
		{"openinference embedding", map[string]any{conventions.OpenInferenceKind: "EMBEDDING"}, true},
		{"openinference chain", map[string]any{conventions.OpenInferenceKind: "CHAIN", "llm.model_name": "x"}, false},
		{"openinference retriever", map[string]any{conventions.OpenInferenceKind: "RETRIEVER"}, false},
	}
	for _, tc := range cases {
		_, span := testSpan(tc.attrs)
		if got := (Classify("", span) == conventions.RoleCall); got != tc.want {
			t.Errorf("%s: IsLLMCall = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCallRowFromSpan(t *testing.T) {
	res, span := testSpan(map[string]any{
		conventions.OperationName:          "chat",
		conventions.ProviderName:           "openai",
		conventions.RequestModel:           "gpt-4o",
		conventions.ResponseModel:          "gpt-4o-2024-08-06",
		conventions.ResponseID:             "chatcmpl-abc",
		conventions.FinishReasons:          []any{"stop"},
		conventions.TimeToFirstChunk:       0.25,
		conventions.UsageInput:             int64(1000),
		conventions.UsageOutput:            int64(200),
		conventions.UsageCacheRead:         int64(400),
		conventions.RequestTemperature:     0.2,
		conventions.RequestMaxTokens:       int64(512),
		conventions.RequestSeed:            int64(7),
		conventions.RequestStop:            []any{"\n\n"},
		"gen_ai.request.frequency_penalty": 0.5,
		conventions.InputMessages:          `[{"role":"user","parts":[{"type":"text","content":"secret"}]}]`,
		conventions.EndUser:                "u-93f",
		"http.request.resend_count":        int64(2),
	})
	res.Attributes().PutStr(conventions.TenantAttribute, "acme")
	ingested := time.Date(2026, 3, 1, 12, 0, 5, 0, time.UTC)
	c := testExtractor(t).Call(res, span, ingested)

	if c.Tenant != "acme" || c.ServiceName != "support-bot" || c.TraceID != "0102030405060708090a0b0c0d0e0f10" || c.SpanID != "0101010101010101" || c.ParentSpanID != "0202020202020202" {
		t.Fatalf("identity columns wrong: %+v", c)
	}
	if c.RequestModel != "gpt-4o" || c.ResponseModel != "gpt-4o-2024-08-06" || c.ResponseID != "chatcmpl-abc" {
		t.Fatalf("model columns wrong: %+v", c)
	}
	if c.DurationMS != 1500 || c.TTFTMS == nil || *c.TTFTMS != 250 {
		t.Fatalf("timing wrong: duration %v ttft %v", c.DurationMS, c.TTFTMS)
	}
	if *c.InputTokens != 1000 || *c.OutputTokens != 200 || *c.CacheReadTokens != 400 || c.CacheWriteTokens != nil || c.ReasoningTokens != nil {
		t.Fatalf("usage wrong: %+v", c)
	}
	if c.UsageSource != ledger.UsageReported || c.Status != ledger.StatusUnset || c.ErrorClass != "" {
		t.Fatalf("status wrong: usage %q status %q class %q", c.UsageSource, c.Status, c.ErrorClass)
	}
	if *c.Temperature != 0.2 || *c.MaxTokens != 512 || *c.Seed != 7 || c.StopSequences[0] != "\n\n" || c.RequestParams["frequency_penalty"] != "0.5" {
		t.Fatalf("params wrong: %+v", c)
	}
	if _, ok := c.RequestParams["model"]; ok {
		t.Fatal("model must not be duplicated into request_params")
	}
	if c.EndUserRef != "u-93f" || *c.RetryAttempt != 2 {
		t.Fatalf("end user / retry wrong: %+v", c)
	}
	if c.ContentStatus != ledger.ContentOnSpan || c.InputRef != "" {
		t.Fatalf("content status %q, want %q", c.ContentStatus, ledger.ContentOnSpan)
	}
	if c.CostStatus != "ok" || c.CostUSD == nil || c.PriceRef == "" {
		t.Fatalf("cost: status %q usd %v ref %q", c.CostStatus, c.CostUSD, c.PriceRef)
	}
}

func TestUnknownIsNotZero(t *testing.T) {
	x := testExtractor(t)
	_, span := testSpan(map[string]any{conventions.OperationName: "chat", conventions.ProviderName: "openai", conventions.RequestModel: "gpt-4o"})
	c := x.Call(pcommon.NewResource(), span, time.Now())
	if c.InputTokens != nil || c.OutputTokens != nil || c.UsageSource != ledger.UsageMissing || c.CostUSD != nil || c.CostStatus != "missing_usage" {
		t.Fatalf("missing usage: %+v", c)
	}
	if c.Tenant != "default" {
		t.Fatalf("tenant %q, want default", c.Tenant)
	}
	_, span = testSpan(map[string]any{conventions.OperationName: "chat", conventions.ProviderName: "openai", conventions.RequestModel: "no-such-model-xyz",
		conventions.UsageInput: int64(5), conventions.UsageOutput: int64(1)})
	c = x.Call(pcommon.NewResource(), span, time.Now())
	if c.CostUSD != nil || c.CostStatus != "unknown_model" {
		t.Fatalf("unknown model: %+v", c)
	}
	_, span = testSpan(map[string]any{conventions.OperationName: "chat", conventions.UsageInput: "lots"})
	c = x.Call(pcommon.NewResource(), span, time.Now())
	if c.InputTokens != nil || !contains(c.AttributeIssues, "not_an_integer:gen_ai.usage.input_tokens") {
		t.Fatalf("bad integer: %v %v", c.InputTokens, c.AttributeIssues)
	}
}

func TestHostileAttributeValues(t *testing.T) {
	huge := strings.Repeat("x", 10<<20)
	_, span := testSpan(map[string]any{
		conventions.OperationName: "chat",
		conventions.RequestModel:  "gpt\x00-4o\xff",
		conventions.ResponseID:    huge,
		"gen_ai.request.user_tag": huge,
	})
	c := testExtractor(t).Call(pcommon.NewResource(), span, time.Now())
	if c.RequestModel != "gpt-4o\uFFFD" {
		t.Fatalf("model %q", c.RequestModel)
	}
	if len(c.ResponseID) != maxIDLen || len(c.RequestParams["user_tag"]) != maxParamLen {
		t.Fatalf("not truncated: %d %d", len(c.ResponseID), len(c.RequestParams["user_tag"]))
	}
	for _, want := range []string{"invalid_utf8:gen_ai.request.model", "nul_bytes:gen_ai.request.model", "truncated:gen_ai.response.id", "truncated:gen_ai.request.user_tag"} {
		if !contains(c.AttributeIssues, want) {
			t.Errorf("issues %v lack %q", c.AttributeIssues, want)
		}
	}
}

// Free text never classifies (the table of structured fields is
// ledger's TestErrorClassFromStructuredFields): a message mentioning 429
// on a successful call leaves it unclassified.
func TestErrorClassIgnoresFreeText(t *testing.T) {
	_, span := testSpan(map[string]any{conventions.OperationName: "chat", "exception.message": "HTTP 429 in the disclosure text"})
	span.Status().SetCode(ptrace.StatusCodeOk)
	if c := testExtractor(t).Call(pcommon.NewResource(), span, time.Now()); c.ErrorClass != ledger.ErrClassNone {
		t.Fatalf("free text classified as %q", c.ErrorClass)
	}
}

func TestEvidenceSpans(t *testing.T) {
	x := testExtractor(t)
	_, span := testSpan(map[string]any{conventions.DBSystemName: "postgresql", conventions.DBQueryText: "SELECT * FROM users WHERE email = 'a@b.c'", conventions.DBOperationName: "SELECT"})
	e, ok := evidenceOf(x, pcommon.NewResource(), span, time.Now())
	if !ok || e.Category != "db" || e.DBQueryText != nil || e.DBQueryStatus != ledger.QueryUnsanitized {
		t.Fatalf("unsanitized query must not be stored: ok=%v %+v", ok, e)
	}
	_, span = testSpan(map[string]any{conventions.DBSystemName: "postgresql", conventions.DBQueryText: "SELECT * FROM users WHERE email = ?", AttrQuerySanitization: "full"})
	e, _ = evidenceOf(x, pcommon.NewResource(), span, time.Now())
	if e.DBQueryText == nil || *e.DBQueryText != "SELECT * FROM users WHERE email = ?" || e.DBQueryStatus != ledger.QuerySanitized {
		t.Fatalf("sanitized query: %+v", e)
	}
	span = spantest.Retrieval(ptrace.NewSpanSlice(), "kb", `[{"id":"doc-1","version":"v3","score":0.9},{"id":"doc-2"}]`)
	spantest.At(span, pcommon.TraceID{1, 2, 3}, pcommon.SpanID{1, 1, 1}, time.Now())
	e, _ = evidenceOf(x, pcommon.NewResource(), span, time.Now())
	if e.Category != "retrieval" || len(e.Documents) != 2 || e.Documents[0].Version != "v3" || *e.Documents[0].Score != 0.9 || e.Documents[1].Score != nil {
		t.Fatalf("retrieval: %+v", e)
	}
	_, span = testSpan(map[string]any{conventions.HTTPRequestMethod: "GET"})
	if _, ok := evidenceOf(x, pcommon.NewResource(), span, time.Now()); ok {
		t.Fatal("plain HTTP span is not evidence")
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestOpenInferenceCall: a span of the OpenInference conventions (Arize
// Phoenix's instrumentations) is a call with its model, provider, usage and
// the references the content processor left for its content.
func TestOpenInferenceCall(t *testing.T) {
	res, span := testSpan(map[string]any{
		conventions.OpenInferenceKind: "LLM", "llm.model_name": "gpt-4o-mini-2024-07-18", "llm.provider": "openai",
		"llm.token_count.prompt": 1000, "llm.token_count.completion": 200, "llm.token_count.prompt_details.cache_read": 100,
		"llm.input_messages_ref": "docket-content://default/input.messages/aa", "output.value_ref": "docket-content://default/output.value/bb",
		"llm.tools_ref": "docket-content://default/tool.definitions/cc", conventions.ContentStatus: "stored",
		conventions.InvocationParameters: `{"temperature":0.2,"max_completion_tokens":300,"seed":42,"stop":"END","stream":true}`,
	})
	c := testExtractor(t).Call(res, span, time.Now())
	c.Derive(testExtractor(t).Prices)
	// Streamed: llm.model_name is the requested name, not the response's.
	if c.Operation != "chat" || c.Provider != "openai" || c.RequestModel != "gpt-4o-mini-2024-07-18" || c.ResponseModel != "" {
		t.Fatalf("metadata: %+v", c)
	}
	if *c.InputTokens != 1000 || *c.OutputTokens != 200 || *c.CacheReadTokens != 100 || c.CacheWriteTokens != nil {
		t.Fatalf("usage: %v %v %v %v", *c.InputTokens, *c.OutputTokens, *c.CacheReadTokens, c.CacheWriteTokens)
	}
	if c.InputRef != "docket-content://default/input.messages/aa" || c.OutputRef != "docket-content://default/output.value/bb" ||
		c.ToolDefinitionsRef != "docket-content://default/tool.definitions/cc" {
		t.Fatalf("refs: %q %q %q", c.InputRef, c.OutputRef, c.ToolDefinitionsRef)
	}
	if c.CostUSD == nil || c.CostStatus != "ok" {
		t.Fatalf("cost: %v %s", c.CostUSD, c.CostStatus)
	}
	if *c.Temperature != 0.2 || *c.MaxTokens != 300 || *c.Seed != 42 || c.TopP != nil || strings.Join(c.StopSequences, ",") != "END" {
		t.Fatalf("sampling from llm.invocation_parameters: %v %v %v %v %v", *c.Temperature, *c.MaxTokens, *c.Seed, c.TopP, c.StopSequences)
	}
	res, span = testSpan(map[string]any{conventions.OpenInferenceKind: "LLM", conventions.InvocationParameters: "{not json"})
	if c := testExtractor(t).Call(res, span, time.Now()); c.Temperature != nil || !slices.Contains(c.AttributeIssues, "invalid_json:llm.invocation_parameters") {
		t.Fatalf("malformed parameters: %v %v", c.Temperature, c.AttributeIssues)
	}
	// Without the content processor, OpenInference content on the span is
	// noticed (and never stored by the ledger).
	res, span = testSpan(map[string]any{conventions.OpenInferenceKind: "LLM", conventions.InputValue: "what is my balance?"})
	if c := testExtractor(t).Call(res, span, time.Now()); c.ContentStatus != ledger.ContentOnSpan {
		t.Fatalf("content status %q, want %q", c.ContentStatus, ledger.ContentOnSpan)
	}
}

// TestContentOnSpanEvents: the older forms carry content on span events;
// the row references what the content processor stored of them, and
// notices content left on an event.
func TestContentOnSpanEvents(t *testing.T) {
	res, span := testSpan(map[string]any{conventions.OperationName: "chat", conventions.RequestModel: "gpt-4o-mini", conventions.ContentStatus: "stored"})
	details := span.Events().AppendEmpty()
	details.SetName("gen_ai.client.inference.operation.details")
	details.Attributes().PutStr(conventions.InputRef, "docket-content://default/input.messages/aa")
	details.Attributes().PutStr(conventions.OutputRef, "docket-content://default/output.messages/bb")
	legacy := span.Events().AppendEmpty()
	legacy.SetName("gen_ai.content.prompt")
	legacy.Attributes().PutStr("gen_ai.prompt_ref", "docket-content://default/prompt/cc")
	c := testExtractor(t).Call(res, span, time.Now())
	if c.InputRef != "docket-content://default/input.messages/aa" || c.OutputRef != "docket-content://default/output.messages/bb" || c.ContentStatus != "stored" {
		t.Fatalf("refs from the operation details event: %q %q %q", c.InputRef, c.OutputRef, c.ContentStatus)
	}

	res, span = testSpan(map[string]any{conventions.System: "openai", conventions.RequestModel: "gpt-4o-mini", conventions.ContentStatus: "stored"})
	for name, ref := range map[string]string{"gen_ai.content.prompt": "gen_ai.prompt_ref", "gen_ai.content.completion": "gen_ai.completion_ref"} {
		ev := span.Events().AppendEmpty()
		ev.SetName(name)
		ev.Attributes().PutStr(ref, "docket-content://default/x/"+name)
	}
	c = testExtractor(t).Call(res, span, time.Now())
	if c.InputRef != "docket-content://default/x/gen_ai.content.prompt" || c.OutputRef != "docket-content://default/x/gen_ai.content.completion" {
		t.Fatalf("refs from the legacy content events: %q %q", c.InputRef, c.OutputRef)
	}

	// Without the content processor, content on an event is noticed.
	res, span = testSpan(map[string]any{conventions.System: "openai", conventions.RequestModel: "gpt-4o-mini"})
	ev := span.Events().AppendEmpty()
	ev.SetName("gen_ai.content.prompt")
	ev.Attributes().PutStr(conventions.Prompt, "what is my balance?")
	if c := testExtractor(t).Call(res, span, time.Now()); c.ContentStatus != ledger.ContentOnSpan {
		t.Fatalf("content status %q, want %q", c.ContentStatus, ledger.ContentOnSpan)
	}
}

// TestOpenLLMetryCall: an OpenLLMetry (Traceloop) call keeps its content in
// gen_ai.prompt.N.*, gen_ai.completion.N.* and llm.request.functions.N.*;
// the row references what the content processor stored of them.
func TestOpenLLMetryCall(t *testing.T) {
	res, span := testSpan(map[string]any{
		conventions.System: "openai", "llm.request.type": "chat", conventions.RequestModel: "gpt-4o-mini",
		"gen_ai.usage.prompt_tokens": 10, "gen_ai.usage.completion_tokens": 5,
		"gen_ai.prompt_ref": "docket-content://default/prompt/aa", "gen_ai.completion_ref": "docket-content://default/completion/bb",
		"llm.request.functions_ref": "docket-content://default/tool.definitions/cc", conventions.ContentStatus: "stored",
	})
	c := testExtractor(t).Call(res, span, time.Now())
	if c.Operation != "chat" || c.UsageSource != ledger.UsageReported {
		t.Fatalf("metadata: %q %q", c.Operation, c.UsageSource)
	}
	if c.InputRef != "docket-content://default/prompt/aa" || c.OutputRef != "docket-content://default/completion/bb" ||
		c.ToolDefinitionsRef != "docket-content://default/tool.definitions/cc" {
		t.Fatalf("refs: %q %q %q", c.InputRef, c.OutputRef, c.ToolDefinitionsRef)
	}
	// Without the content processor, the content on the span is noticed.
	for _, k := range []string{"gen_ai.prompt.0.content", "llm.request.functions.0.description", "traceloop.entity.input"} {
		res, span = testSpan(map[string]any{conventions.System: "openai", conventions.RequestModel: "gpt-4o-mini", k: "what is my balance?"})
		if c := testExtractor(t).Call(res, span, time.Now()); c.ContentStatus != ledger.ContentOnSpan {
			t.Errorf("%s: content status %q, want %q", k, c.ContentStatus, ledger.ContentOnSpan)
		}
	}
}

// TestSpanContentRefs: the content references on a span that is not a call
// are kept on its evidence row, and a span with nothing else to keep is
// evidence for them alone.
func TestSpanContentRefs(t *testing.T) {
	ref := func(kind string, b byte) string {
		return "docket-content://default/" + kind + "/" + strings.Repeat(string(b), 64)
	}
	res, span := testSpan(map[string]any{
		conventions.OperationName: "execute_tool", "gen_ai.tool.call.arguments_ref": ref("tool.call.arguments", 'a'),
		"gen_ai.tool.call.result_ref": ref("tool.call.result", 'b'), conventions.ContentStatus: "stored",
		"request_ref": "ticket-42", // not a content reference
	})
	ev := span.Events().AppendEmpty()
	ev.Attributes().PutStr(conventions.ContentAttributesRef, ref("user.message", 'c'))
	ev.Attributes().PutStr("gen_ai.prompt_ref", ref("tool.call.arguments", 'a')) // repeated
	e, ok := evidenceOf(testExtractor(t), res, span, time.Now())
	want := []string{ref("tool.call.arguments", 'a'), ref("tool.call.result", 'b'), ref("user.message", 'c')}
	if !ok || e.Category != "genai" || !slices.Equal(slices.Sorted(slices.Values(e.ContentRefs)), want) {
		t.Fatalf("tool span: %v %q %v", ok, e.Category, e.ContentRefs)
	}

	// An OpenLLMetry workflow is a GenAI step by the contract.
	res, span = testSpan(map[string]any{"traceloop.span.kind": "workflow", "traceloop.entity.input_ref": ref("entity.input", 'd')})
	if e, ok := evidenceOf(testExtractor(t), res, span, time.Now()); !ok || e.Category != "genai" || len(e.ContentRefs) != 1 {
		t.Fatalf("workflow span: %v %q %v", ok, e.Category, e.ContentRefs)
	}
	res, span = testSpan(map[string]any{conventions.HTTPRoute: "/work", "traceloop.entity.input_ref": ref("entity.input", 'd')})
	if e, ok := evidenceOf(testExtractor(t), res, span, time.Now()); !ok || e.Category != "content" || len(e.ContentRefs) != 1 {
		t.Fatalf("workflow span: %v %q %v", ok, e.Category, e.ContentRefs)
	}
	res, span = testSpan(map[string]any{conventions.HTTPRoute: "/health", "request_ref": "ticket-42"})
	if _, ok := evidenceOf(testExtractor(t), res, span, time.Now()); ok {
		t.Fatal("a span without content references or evidence attributes is not evidence")
	}

	attrs := map[string]any{conventions.OperationName: "execute_tool"}
	for i := range maxContentRefs + 5 {
		attrs[fmt.Sprintf("k%d_ref", i)] = ref("tool.call.result", "0123456789abcdef"[i%16]) + fmt.Sprint(i)
	}
	res, span = testSpan(attrs)
	e, _ = evidenceOf(testExtractor(t), res, span, time.Now())
	if len(e.ContentRefs) != 0 {
		t.Fatalf("malformed digests taken as references: %v", e.ContentRefs)
	}
	for i := range maxContentRefs + 5 {
		attrs[fmt.Sprintf("k%d_ref", i)] = fmt.Sprintf("docket-content://default/tool.call.result/%064x", i)
	}
	res, span = testSpan(attrs)
	e, _ = evidenceOf(testExtractor(t), res, span, time.Now())
	if len(e.ContentRefs) != maxContentRefs || !slices.Contains(e.AttributeIssues, "truncated:content_refs") {
		t.Fatalf("%d references kept, issues %v", len(e.ContentRefs), e.AttributeIssues)
	}
}

func TestOpenInferenceRetrieverIsEvidence(t *testing.T) {
	res, span := testSpan(map[string]any{
		conventions.OpenInferenceKind:             "RETRIEVER",
		"retrieval.documents.0.document.id":       "doc-3",
		"retrieval.documents.0.document.score":    0.42,
		"retrieval.documents.0.document.metadata": `{"version":"v2"}`,
		"retrieval.documents.1.document.id":       "doc-12",
		"retrieval.documents.1.document.content":  "never read",
	})
	if Classify("", span) == conventions.RoleCall {
		t.Fatal("a retriever span is a call")
	}
	e, ok := evidenceOf(testExtractor(t), res, span, time.Now())
	if !ok || e.Category != "retrieval" || len(e.Documents) != 2 {
		t.Fatalf("evidence: %v %+v", ok, e)
	}
	if d := e.Documents[0]; d.ID != "doc-3" || d.Version != "v2" || d.Score == nil || *d.Score != 0.42 {
		t.Fatalf("first document: %+v", d)
	}
	if d := e.Documents[1]; d.ID != "doc-12" || d.Version != "" || d.Score != nil {
		t.Fatalf("second document: %+v", d)
	}
	if e, _ := evidenceOf(testExtractor(t), pcommon.NewResource(), testSpanOnly(map[string]any{conventions.OpenInferenceKind: "CHAIN"}), time.Now()); e.Category != "genai" {
		t.Fatal("an OpenInference chain span is not a GenAI step")
	}
}

func TestIsContentAttribute(t *testing.T) {
	for k, want := range map[string]bool{
		conventions.InputMessages:                      true,
		"gen_ai.prompt.0.content":                      true,
		"gen_ai.tool.call.arguments":                   true,
		"llm.prompts.0":                                true,
		"llm.tools.0.tool.json_schema":                 true,
		"embedding.embeddings.0.embedding.text":        true,
		"reranker.query":                               true,
		"retrieval.documents.3.document.content":       true,
		"reranker.output_documents.0.document.content": true,
		"retrieval.documents.3.document.id":            false,
		"retrieval.documents.3.document.metadata":      false,
		"gen_ai.prompts":                               false,
		conventions.RequestModel:                       false,
		conventions.InputRef:                           false,
		"llm.token_count.prompt":                       false,
		"input.mime_type":                              false,
		conventions.HTTPRoute:                          false,
		"":                                             false,
	} {
		if got := IsContentAttribute(k); got != want {
			t.Errorf("IsContentAttribute(%q) = %v, want %v", k, got, want)
		}
	}
	// A call with only OpenInference prompt templates on it has content on
	// the span.
	res, span := testSpan(map[string]any{conventions.OpenInferenceKind: "LLM", "llm.prompt_template.variables": `{"name":"x"}`})
	if c := testExtractor(t).Call(res, span, time.Now()); c.ContentStatus != ledger.ContentOnSpan {
		t.Fatalf("content status %q, want %q", c.ContentStatus, ledger.ContentOnSpan)
	}
}

// TestSpansWithoutIDsKeyedByContent: a span with no IDs is keyed by its
// content, so a resend of it deduplicates while another call never shares
// its key or its trace; without a window only unrepresentable times are
// flagged.
func TestSpansWithoutIDsKeyedByContent(t *testing.T) {
	x := &Extractor{DefaultTenant: "default"}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	keyOf := func(model string) ledger.Call {
		res, span := testSpan(map[string]any{conventions.OperationName: "chat", conventions.RequestModel: model})
		span.SetTraceID(pcommon.TraceID{})
		span.SetSpanID(pcommon.SpanID{})
		span.SetEndTimestamp(math.MaxUint64)
		return x.Call(res, span, at)
	}
	a, again, b := keyOf("gpt-4o"), keyOf("gpt-4o"), keyOf("gpt-4o-mini")
	if ledger.CallKey(&a) != ledger.CallKey(&again) {
		t.Fatalf("a resent span got another key: %s, %s", ledger.CallKey(&a), ledger.CallKey(&again))
	}
	if a.TraceID == b.TraceID || a.SpanID == b.SpanID || a.ParentSpanID != "" {
		t.Fatalf("two calls without IDs share a trace or span: %+v %+v", a, b)
	}
	want := []string{"invalid_id:trace_id", "invalid_id:span_id", "out_of_window:end_time"}
	if !slices.Equal(a.AttributeIssues, want) || !a.EndTime.Equal(a.StartTime) || a.StartTime.Year() != 2026 {
		t.Fatalf("issues %q, start %s, end %s", a.AttributeIssues, a.StartTime, a.EndTime)
	}
}

// TestCallContentBeyondItsColumns: references on a call span that no
// reference column holds (unknown attributes, an event's payload) come
// with the call as a content evidence row, which the audited read path,
// deletion and legal holds read; the column references are not repeated.
func TestCallContentBeyondItsColumns(t *testing.T) {
	ref := func(kind string, b byte) string {
		return "docket-content://default/" + kind + "/" + strings.Repeat(string(b), 64)
	}
	res, span := testSpan(map[string]any{
		conventions.OperationName: "chat", conventions.RequestModel: "gpt-4o",
		conventions.InputRef: ref("input.messages", 'a'), conventions.UnknownRef: ref(conventions.UnknownKind, 'b'),
	})
	span.Events().AppendEmpty().Attributes().PutStr(conventions.ContentAttributesRef, ref("user.message", 'c'))
	c, e, kind := testExtractor(t).Extract(res, "", span, time.Now())
	want := []string{ref(conventions.UnknownKind, 'b'), ref("user.message", 'c')}
	if kind != KindCall || c.InputRef != ref("input.messages", 'a') || e.Category != categoryContent || e.SpanID != c.SpanID ||
		!slices.Equal(slices.Sorted(slices.Values(e.ContentRefs)), want) {
		t.Fatalf("kind %v, input %q, evidence %q %v", kind, c.InputRef, e.Category, e.ContentRefs)
	}
	res, span = testSpan(map[string]any{conventions.OperationName: "chat", conventions.InputRef: ref("input.messages", 'a')})
	if _, e, _ := testExtractor(t).Extract(res, "", span, time.Now()); len(e.ContentRefs) != 0 || e.SpanID != "" {
		t.Fatalf("a call whose references are all in its columns got evidence: %+v", e)
	}
}

// TestUnreportedCacheRead: an OpenAI prompt of 1,024+ input tokens may have
// been read from the provider's automatic cache; a span with no cache-read
// count under any key leaves the cost unknown, not priced as plain input.
func TestUnreportedCacheRead(t *testing.T) {
	x := testExtractor(t)
	call := func(provider, model string, input int64, extra map[string]any) ledger.Call {
		attrs := map[string]any{conventions.OperationName: "chat", conventions.ProviderName: provider, conventions.RequestModel: model,
			conventions.UsageInput: input, conventions.UsageOutput: int64(10)}
		for k, v := range extra {
			attrs[k] = v
		}
		_, span := testSpan(attrs)
		return x.Call(pcommon.NewResource(), span, time.Now())
	}
	for _, c := range []struct {
		name string
		call ledger.Call
		want conventions.CostStatus
	}{
		{"openai 1024 no cache key", call("openai", "gpt-4o-mini", 1024, nil), conventions.CostUnreportedCacheRead},
		{"openai.chat 4000 no cache key", call("openai.chat", "gpt-4o-mini", 4000, nil), conventions.CostUnreportedCacheRead},
		{"openai 4000 cached 0", call("openai", "gpt-4o-mini", 4000, map[string]any{conventions.UsageCacheRead: int64(0)}), conventions.CostOK},
		{"openai 4000 cached under OpenLLMetry's key", call("openai", "gpt-4o-mini", 4000, map[string]any{"gen_ai.usage.cache_read_input_tokens": int64(1280)}), conventions.CostOK},
		{"openai 1023", call("openai", "gpt-4o-mini", 1023, nil), conventions.CostOK},
		{"anthropic 4000 no cache key", call("anthropic", "claude-sonnet-4-5", 4000, nil), conventions.CostOK},
	} {
		if c.call.CostStatus != string(c.want) {
			t.Errorf("%s: cost_status %q, want %q", c.name, c.call.CostStatus, c.want)
		}
		if (c.call.CostUSD == nil) != (c.want != conventions.CostOK) {
			t.Errorf("%s: cost %v with status %q", c.name, c.call.CostUSD, c.call.CostStatus)
		}
	}
}
