package extract

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
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
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o-mini",
			"gen_ai.response.model": "gpt-4o-mini-2024-07-18", "gen_ai.response.id": "chatcmpl-123", "gen_ai.usage.input_tokens": int64(120),
			"gen_ai.usage.output_tokens": int64(30), "gen_ai.request.temperature": 0.2, "gen_ai.response.finish_reasons": []any{"stop"},
			"server.address": "api.example.invalid", "gen_ai.input.messages_ref": "docket-content://default/input.messages/aa", "docket.content.status": "stored"}},
		{"@arizeai/openinference-instrumentation-openai", "OpenAI Chat Completions", map[string]any{
			"openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini-2024-07-18", "llm.provider": "openai",
			"llm.token_count.prompt": int64(1000), "llm.token_count.completion": int64(200), "llm.token_count.prompt_details.cache_read": int64(100),
			"llm.invocation_parameters": `{"model":"gpt-4o-mini","temperature":0.2,"max_completion_tokens":300}`, "output.mime_type": "application/json"}},
		{"@traceloop/instrumentation-anthropic", "chat claude-sonnet-4-5", map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic", "gen_ai.request.model": "claude-sonnet-4-5",
			"gen_ai.response.model": "claude-sonnet-4-5-20250929", "gen_ai.usage.input_tokens": int64(1000), "gen_ai.usage.output_tokens": int64(100),
			"gen_ai.usage.cache_read.input_tokens": int64(200), "gen_ai.usage.cache_creation.input_tokens": int64(300), "gen_ai.request.max_tokens": int64(512)}},
		{"ai", "ai.generateText.doGenerate", map[string]any{
			"ai.operationId": "ai.generateText.doGenerate", "operation.name": "ai.generateText.doGenerate", "ai.model.id": "gpt-4o-mini",
			"ai.model.provider": "openai.chat", "gen_ai.system": "openai.chat", "gen_ai.request.model": "gpt-4o-mini",
			"gen_ai.response.id": "chatcmpl-9", "gen_ai.usage.input_tokens": int64(100), "gen_ai.usage.output_tokens": int64(20),
			"ai.usage.inputTokens": int64(100), "ai.usage.outputTokens": int64(20), "ai.response.finishReason": "stop"}},
		{"ai", "ai.generateText", map[string]any{"ai.operationId": "ai.generateText", "operation.name": "ai.generateText",
			"ai.model.id": "gpt-4o-mini", "ai.model.provider": "openai.chat", "ai.usage.inputTokens": int64(100)}},
		{"app", "invoke_agent support", map[string]any{"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support",
			"gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": int64(100)}},
		{"app", "execute_tool lookup", map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
			"gen_ai.tool.call.arguments_ref": "docket-content://default/tool.call.arguments/" + fmt.Sprintf("%064x", 1)}},
		{"app", "retrieve", map[string]any{"gen_ai.operation.name": "retrieval", "gen_ai.data_source.id": "kb",
			"gen_ai.retrieval.documents": `[{"id":"doc-7","version":"v2","score":0.5},{"id":"doc-9","version":"v1","score":0.4}]`}},
		{"pg", "SELECT users", map[string]any{"db.system.name": "postgresql", "db.operation.name": "SELECT", "db.collection.name": "users",
			"db.query.text": "SELECT * FROM users WHERE id = ?", "db.query.sanitization": "full"}},
		{"http", "GET /tickets/{id}", map[string]any{"http.request.method": "GET", "http.route": "/tickets/{id}",
			"http.response.status_code": int64(200), "url.scheme": "https", "server.address": "support.example.invalid"}},
	}
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "support-bot")
	rs.Resource().Attributes().PutStr("tenant.id", "acme")
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
