package extract

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
)

// benchSpans is a batch of 1,000 spans as an instrumented service sends
// them: model calls of several families, their wrappers and agent steps,
// tools, retrievals, database queries and plain HTTP spans.
func benchSpans() ptrace.Traces {
	kinds := []struct {
		scope, name string
		attrs       map[string]any
	}{
		{"@opentelemetry/instrumentation-openai", "chat gpt-4o-mini", map[string]any{
			conventions.OperationName: "chat", conventions.ProviderName: "openai", conventions.RequestModel: "gpt-4o-mini",
			conventions.ResponseModel: "gpt-4o-mini-2024-07-18", conventions.ResponseID: "chatcmpl-123", conventions.UsageInput: int64(120),
			conventions.UsageOutput: int64(30), conventions.RequestTemperature: 0.2, conventions.FinishReasons: []any{"stop"},
			"server.address": "api.example.invalid", conventions.InputRef: "docket-content://default/input.messages/aa", conventions.ContentStatus: "stored"}},
		{"@arizeai/openinference-instrumentation-openai", "OpenAI Chat Completions", map[string]any{
			conventions.OpenInferenceKind: "LLM", "llm.model_name": "gpt-4o-mini-2024-07-18", "llm.provider": "openai",
			"llm.token_count.prompt": int64(1000), "llm.token_count.completion": int64(200), "llm.token_count.prompt_details.cache_read": int64(100),
			conventions.InvocationParameters: `{"model":"gpt-4o-mini","temperature":0.2,"max_completion_tokens":300}`, "output.mime_type": "application/json"}},
		{"@traceloop/instrumentation-anthropic", "chat claude-sonnet-4-5", map[string]any{
			conventions.OperationName: "chat", conventions.ProviderName: "anthropic", conventions.RequestModel: "claude-sonnet-4-5",
			conventions.ResponseModel: "claude-sonnet-4-5-20250929", conventions.UsageInput: int64(1000), conventions.UsageOutput: int64(100),
			conventions.UsageCacheRead: int64(200), conventions.UsageCacheCreation: int64(300), conventions.RequestMaxTokens: int64(512)}},
		{"ai", "ai.generateText.doGenerate", map[string]any{
			"ai.operationId": "ai.generateText.doGenerate", "operation.name": "ai.generateText.doGenerate", "ai.model.id": "gpt-4o-mini",
			"ai.model.provider": "openai.chat", conventions.System: "openai.chat", conventions.RequestModel: "gpt-4o-mini",
			conventions.ResponseID: "chatcmpl-9", conventions.UsageInput: int64(100), conventions.UsageOutput: int64(20),
			"ai.usage.inputTokens": int64(100), "ai.usage.outputTokens": int64(20), "ai.response.finishReason": "stop"}},
		{"ai", "ai.generateText", map[string]any{"ai.operationId": "ai.generateText", "operation.name": "ai.generateText",
			"ai.model.id": "gpt-4o-mini", "ai.model.provider": "openai.chat", "ai.usage.inputTokens": int64(100)}},
		{"app", "invoke_agent support", map[string]any{conventions.OperationName: "invoke_agent", "gen_ai.agent.name": "support",
			conventions.RequestModel: "gpt-4o-mini", conventions.UsageInput: int64(100)}},
		{"app", "execute_tool lookup", map[string]any{conventions.OperationName: "execute_tool", "gen_ai.tool.name": "lookup",
			"gen_ai.tool.call.arguments_ref": "docket-content://default/tool.call.arguments/" + fmt.Sprintf("%064x", 1)}},
		{"app", "retrieve", map[string]any{conventions.OperationName: "retrieval", conventions.DataSourceID: "kb",
			conventions.RetrievalDocuments: `[{"id":"doc-7","version":"v2","score":0.5},{"id":"doc-9","version":"v1","score":0.4}]`}},
		{"pg", "SELECT users", map[string]any{conventions.DBSystemName: "postgresql", conventions.DBOperationName: "SELECT", conventions.DBCollectionName: "users",
			conventions.DBQueryText: "SELECT * FROM users WHERE id = ?", conventions.QuerySanitization: "full"}},
		{"http", "GET /tickets/{id}", map[string]any{conventions.HTTPRequestMethod: "GET", conventions.HTTPRoute: "/tickets/{id}",
			conventions.HTTPResponseStatusCode: int64(200), "url.scheme": "https", "server.address": "support.example.invalid"}},
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.ServiceName, "support-bot")
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i, k := range kinds {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(k.scope)
		for j := range 1000 / len(kinds) {
			span := ss.Spans().AppendEmpty()
			span.SetName(k.name)
			span.SetTraceID(pcommon.TraceID{byte(i), byte(j), byte(j >> 8), 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
			span.SetSpanID(pcommon.SpanID{byte(i), byte(j), byte(j >> 8), 4, 5, 6, 7, 8})
			span.SetParentSpanID(pcommon.SpanID{2, byte(j), 2, 2, 2, 2, 2, 2})
			span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
			span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(1500 * time.Millisecond)))
			if err := span.Attributes().FromRaw(k.attrs); err != nil {
				panic(err)
			}
		}
	}
	return td
}

// BenchmarkExtract1000Spans is the ledger exporter's per-batch Go cost of
// reading spans: classifying each of 1,000 spans and building its call or
// evidence row (pricing included), as convert does. One op is 1,000 spans.
func BenchmarkExtract1000Spans(b *testing.B) {
	x := testExtractor(b)
	td := benchSpans()
	now := time.Now()
	rs := td.ResourceSpans().At(0)
	calls, evidence := 0, 0
	cpu := cpuTime()
	for b.Loop() {
		calls, evidence = 0, 0
		for _, ss := range rs.ScopeSpans().All() {
			for _, span := range ss.Spans().All() {
				c, e := extractOne(x, rs.Resource(), ss.Scope().Name(), span, now)
				calls += c
				evidence += e
			}
		}
	}
	// CPU time, unlike wall time, does not count waiting for a core on a
	// loaded machine.
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	// The rows made tell which spans each version recognises.
	b.ReportMetric(float64(calls), "calls/op")
	b.ReportMetric(float64(evidence), "evidence/op")
}

// cpuTime is the process's user and system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// extractOne is what convert does with one span: 1, 0 for a call row, 0, 1
// for an evidence row.
func extractOne(x *Extractor, res pcommon.Resource, scope string, span ptrace.Span, now time.Time) (int, int) {
	_, _, kind := x.Extract(res, scope, span, now)
	switch kind {
	case KindCall:
		return 1, 0
	case KindEvidence:
		return 0, 1
	}
	return 0, 0
}
