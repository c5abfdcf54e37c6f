package conventions

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestContentIndex(t *testing.T) {
	for attr, want := range map[string]string{
		"ai.prompt.messages":                     "ai.prompt.messages",
		"ai.prompt":                              "ai.prompt",
		"ai.response.text":                       "ai.response.text",
		"ai.response.id":                         "",
		"ai.response.msToFirstChunk":             "",
		"ai.telemetry.metadata.user":             "ai.telemetry.metadata",
		"llm.invocation_parameters":              "llm.invocation_parameters",
		"input":                                  "input",
		"input.mime_type":                        "",
		"input.value":                            "input.value",
		"gen_ai.prompt.0.content":                "gen_ai.prompt",
		"retrieval.documents.0.document.content": "retrieval.documents",
		"retrieval.documents.0.document.id":      "",
		"langfuse.observation.input":             "langfuse.observation.input",
		"langfuse.observation.type":              "",
		"spring.ai.tool.definition.0.name":       "spring.ai.tool.definition",
		"db.vector.query.content":                "db.vector.query.content",
		"metadata.user_api_key":                  "metadata",
		"gen_ai.usage.input_tokens":              "",
		"ai.prompt.messages_ref":                 "",
		"ai.prompt.tools_ref":                    "",
		"ai.prompt_ref":                          "",
	} {
		got := ""
		if i := ContentIndex(attr); i >= 0 {
			got = ContentKeys[i].Name
		}
		if got != want {
			t.Errorf("%s: item %q, want %q", attr, got, want)
		}
	}
}

func TestNormalizeProvider(t *testing.T) {
	for in, want := range map[string]string{
		"openai.chat": "openai", "openai.responses": "openai", "openai": "openai", "OpenAI": "openai",
		"anthropic.messages": "anthropic", "google.vertex.chat": "gcp.vertex_ai", "azure.ai.openai": "azure.ai.openai",
		"aws.bedrock": "aws.bedrock", "openairouter": "openairouter", "": "",
	} {
		if got := NormalizeProvider(in); got != want {
			t.Errorf("NormalizeProvider(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLift: metadata kept inside OpenInference's content is copied out
// before the content processor moves it, without overwriting what is set.
func TestLift(t *testing.T) {
	attrs := pcommon.NewMap()
	_ = attrs.FromRaw(map[string]any{
		OpenInferenceKind:    "LLM",
		InvocationParameters: `{"model":"gpt-4o-mini","temperature":0.5,"max_tokens":64,"stop":["END"],"stream":false,"tools":[{"type":"function"}]}`,
		OutputValue:          `{"id":"chatcmpl-1","model":"gpt-4o-mini-2024-07-18","choices":[{"message":{"content":"secret"}}]}`,
		RequestTopP:          0.9,
	})
	Lift("", attrs, InvocationParameters)
	Lift("", attrs, OutputValue)
	want := map[string]any{RequestModel: "gpt-4o-mini", RequestTemperature: 0.5, RequestMaxTokens: int64(64),
		RequestStream: false, ResponseID: "chatcmpl-1", ResponseModel: "gpt-4o-mini-2024-07-18", RequestTopP: 0.9}
	for k, w := range want {
		v, ok := attrs.Get(k)
		if !ok || v.AsRaw() != w {
			t.Errorf("%s = %v (%v), want %v", k, v.AsRaw(), ok, w)
		}
	}
	if v, _ := attrs.Get(RequestStop); v.Slice().Len() != 1 || v.Slice().At(0).Str() != "END" {
		t.Errorf("stop sequences %v", v.AsRaw())
	}
	// Nothing of the content's payload is lifted, and other families'
	// content is left alone.
	n := attrs.Len()
	other := pcommon.NewMap()
	other.PutStr(OutputValue, `{"id":"x"}`)
	Lift("", other, OutputValue)
	Lift("", attrs, InputValue)
	if other.Len() != 1 || attrs.Len() != n {
		t.Errorf("lifted from a non-OpenInference span or an unlisted key: %v %v", other.AsRaw(), attrs.AsRaw())
	}
}

// TestTables: every family names its source and recognises itself; kinds
// are stored in the lower case they are compared in.
func TestTables(t *testing.T) {
	for _, f := range append(Families, GenAI) {
		if f.Name == "" || f.Source == "" {
			t.Errorf("family %q lacks a name or source", f.Name)
		}
		if f.Name != GenAI.Name && len(f.Scopes) == 0 && len(f.Markers) == 0 {
			t.Errorf("family %s cannot be recognised", f.Name)
		}
		for k := range f.Kinds {
			if k != toLower(k) {
				t.Errorf("family %s kind %q is not lower case", f.Name, k)
			}
		}
	}
	for c := range NumColumns {
		if len(Columns[c]) == 0 {
			t.Errorf("column %d has no default key", c)
		}
	}
}

func toLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		scope, name string
		attrs       map[string]any
		want        Role
		op          string
	}{
		{"ai", "ai.generateText", map[string]any{"ai.operationId": "ai.generateText", "gen_ai.system": "openai.chat", "gen_ai.request.model": "x"}, RoleNotCall, ""},
		{"ai", "ai.embed.doEmbed", map[string]any{"ai.operationId": "ai.embed.doEmbed", "ai.model.id": "x"}, RoleCall, "embeddings"},
		{"gen_ai", "agent_step", map[string]any{"gen_ai.operation.name": "agent_step", "gen_ai.request.model": "x"}, RoleNotCall, ""},
		{"pydantic-ai", "invoke_agent", map[string]any{"gen_ai.system": "openai", "gen_ai.request.model": "x", "gen_ai.aggregated_usage.input_tokens": 3}, RoleNotCall, ""},
		{"litellm", "raw_gen_ai_request", map[string]any{"gen_ai.system": "openai", "gen_ai.request.model": "x"}, RoleNotCall, ""},
		{"", "x", map[string]any{"openinference.span.kind": "llm"}, RoleCall, "chat"},
		{"", "x", map[string]any{"mlflow.spanType": `"CHAT_MODEL"`}, RoleCall, "chat"},
		{"", "x", map[string]any{"http.route": "/"}, RoleOther, ""},
	} {
		attrs := pcommon.NewMap()
		_ = attrs.FromRaw(tc.attrs)
		role, op := Read(tc.scope, attrs).Classify(tc.name)
		if role != tc.want || op != tc.op {
			t.Errorf("%s %s: %v %q, want %v %q", tc.scope, tc.name, role, op, tc.want, tc.op)
		}
	}
}

func TestTopLevel(t *testing.T) {
	fields, bad := topLevel(` { "id" : "chatcmpl-1", "n": [1, {"x": "}"}], "o": {"a": "\"}"}, "m\u0065": 2.5e3, "t": true } `)
	want := []field{{"id", `"chatcmpl-1"`}, {"n", `[1, {"x": "}"}]`}, {"o", `{"a": "\"}"}`}, {"me", `2.5e3`}, {"t", `true`}}
	if bad || len(fields) != len(want) {
		t.Fatalf("%v %q", bad, fields)
	}
	for i := range want {
		if fields[i] != want[i] {
			t.Errorf("field %d = %q, want %q", i, fields[i], want[i])
		}
	}
	for _, s := range []string{"", "[1]", `{"a":`, `"x"`, "{not json"} {
		if _, bad := topLevel(s); !bad {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestCacheReadUnreported: a prompt an automatic cache may have served,
// with no cache-read count on the span, leaves the cost an upper bound.
func TestCacheReadUnreported(t *testing.T) {
	for _, c := range []struct {
		provider, op string
		input        int64
		reported     bool
		want         bool
	}{
		{"openai", "chat", 1024, false, true},
		{"openai", "chat", 5000, false, true},
		{"azure.ai.openai", "chat", 2000, false, true},
		{"openai", "chat", 1024, true, false}, // a count, even 0, is known
		{"openai", "chat", 1023, false, false},
		{"openai", OperationEmbeddings, 5000, false, false},
		{"anthropic", "chat", 5000, false, false}, // caches only when asked
		{"", "chat", 5000, false, false},
	} {
		if got := CacheReadUnreported(c.provider, c.op, c.input, c.reported); got != c.want {
			t.Errorf("%s %s %d reported=%v: %v, want %v", c.provider, c.op, c.input, c.reported, got, c.want)
		}
	}
}

// The keys Docket writes are a contract with whoever reads its output
// (dashboards, queries, the components' READMEs), and every other test
// names them through these constants: a rename must be deliberate, here.
func TestWrittenKeysAreStable(t *testing.T) {
	for got, want := range map[string]string{
		InputRef: "gen_ai.input.messages_ref", OutputRef: "gen_ai.output.messages_ref",
		SystemInstructionsRef: "gen_ai.system_instructions_ref", ToolDefinitionsRef: "gen_ai.tool.definitions_ref",
		ContentStatus: "docket.content.status", ContentBytes: "docket.content.bytes", ContentBodyRef: "docket.content.body_ref",
		ContentAttributesRef: "docket.content.attributes_ref", ContentItemStatusPrefix: "docket.content.status.",
		QuerySanitization: "db.query.sanitization", ReplayPrefix: "docket.replay.",
		TenantAttribute: "tenant.id", TenantClaimedAttribute: "docket.tenant.claimed",
	} {
		if got != want {
			t.Errorf("written key %q, want %q", got, want)
		}
	}
}
