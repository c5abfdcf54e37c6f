package conventions

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestIsMetadata(t *testing.T) {
	for k, want := range map[string]bool{
		RequestModel: true, UsageInput: true, "gen_ai.request.frequency_penalty": true, "llm.token_count.prompt": true,
		"ai.usage.promptTokens": true, "ai.operationId": true, "openinference.span.kind": true, "service.name": true,
		"http.response.status_code": true, "docket.content.status": true, "retrieval.documents.0.document.id": true,
		"anthropic.message.stop_reason": true,
		// Content keys, even under a metadata prefix, and the unlisted.
		InvocationParameters: false, InputMessages: false, "gen_ai.request.extra_body": false, "ai.settings.temperature": false,
		"gen_ai.event.content": false, "exception.message": false, "app.note": false, "lk.agent.text": false,
		"retrieval.documents.0.document.content": false,
	} {
		if got := IsMetadata(k); got != want {
			t.Errorf("IsMetadata(%q) = %v", k, got)
		}
	}
}

func TestGenAIFamily(t *testing.T) {
	for _, tc := range []struct {
		scope string
		attrs map[string]any
		want  string
	}{
		{"ai", map[string]any{"x": 1}, "vercel-ai"},
		{"", map[string]any{OpenInferenceKind: "LLM"}, "openinference"},
		{"", map[string]any{"langfuse.observation.type": "generation"}, "langfuse"},
		{"", map[string]any{"gen_ai.anything": "x"}, GenAI.Name},
		{"@traceloop/instrumentation-openai", map[string]any{}, "openllmetry-js"},
		{"@opentelemetry/instrumentation-http", map[string]any{"http.route": "/"}, ""},
		{"", map[string]any{"input": "not enough alone"}, ""},
	} {
		m := pcommon.NewMap()
		if err := m.FromRaw(tc.attrs); err != nil {
			t.Fatal(err)
		}
		got, ok := GenAIFamily(tc.scope, m)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("GenAIFamily(%q, %v) = %q, %v", tc.scope, tc.attrs, got, ok)
		}
	}
}
