package contentrefprocessor

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoreextension"
	"github.com/docketlabs/docket/contentstore/contentstoretest"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/s3test"
	"github.com/docketlabs/docket/processors/contentrefprocessor/internal/metadata"
)

var ctx = context.Background()

const testSecret = "processor-test-secret-0123456789abcdef"

type host map[component.ID]component.Component

func (h host) GetExtensions() map[component.ID]component.Component { return h }

// storeExt starts a real contentstore extension and returns a host that
// offers it under the default ID.
func storeExt(t testing.TB, cfg contentstore.Config) (host, contentstore.Store) {
	t.Helper()
	f := contentstoreextension.NewFactory()
	ecfg := f.CreateDefaultConfig().(*contentstoreextension.Config)
	ecfg.Config = cfg
	ext, err := f.Create(ctx, extensiontest.NewNopSettings(f.Type()), ecfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(ctx, host{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ext.Shutdown(ctx) })
	return host{defaultStoreID: ext}, ext.(contentstore.Provider).ContentStore()
}

func dirStoreConfig(t testing.TB, limits contentstore.Limits) contentstore.Config {
	c := contentstoretest.DirConfig(filepath.Join(t.TempDir(), "content"))
	c.Secret = testSecret
	if limits.MaxObjectBytes > 0 {
		c.MaxObjectBytes, c.MaxTotalBytes = limits.MaxObjectBytes, limits.MaxTotalBytes
	}
	return c
}

func defaultConfig() *Config { return NewFactory().CreateDefaultConfig().(*Config) }

type harness struct {
	traces processor.Traces
	logs   processor.Logs
	tsink  *consumertest.TracesSink
	lsink  *consumertest.LogsSink
	reader *sdkmetric.ManualReader
}

func newHarness(t testing.TB, cfg *Config, h component.Host) *harness {
	t.Helper()
	return startHarness(t, cfg, h, processortest.NewNopSettings(metadata.Type))
}

// startHarness starts the processor's traces and logs halves on h under
// set, keeping their metrics, and shuts them down when the test ends.
func startHarness(t testing.TB, cfg *Config, h component.Host, set processor.Settings) *harness {
	t.Helper()
	hs := &harness{tsink: new(consumertest.TracesSink), lsink: new(consumertest.LogsSink), reader: sdkmetric.NewManualReader()}
	set.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(hs.reader))
	var err error
	if hs.traces, err = NewFactory().CreateTraces(ctx, set, cfg, hs.tsink); err != nil {
		t.Fatal(err)
	}
	if hs.logs, err = NewFactory().CreateLogs(ctx, set, cfg, hs.lsink); err != nil {
		t.Fatal(err)
	}
	for _, c := range []component.Component{hs.traces, hs.logs} {
		if err := c.Start(ctx, h); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Shutdown(ctx) })
	}
	return hs
}

func (h *harness) consumeTraces(t testing.TB, td ptrace.Traces) ptrace.Traces {
	t.Helper()
	h.tsink.Reset()
	if err := h.traces.ConsumeTraces(ctx, td); err != nil {
		t.Fatal(err)
	}
	return h.tsink.AllTraces()[0]
}

func (h *harness) consumeLogs(t testing.TB, ld plog.Logs) plog.Logs {
	t.Helper()
	h.lsink.Reset()
	if err := h.logs.ConsumeLogs(ctx, ld); err != nil {
		t.Fatal(err)
	}
	return h.lsink.AllLogs()[0]
}

// canary is a distinct sensitive-looking string for place n.
func canary(n int) string {
	return fmt.Sprintf("canary-%03d jane.doe+%d@example.test 900101-1%06d", n, n, n)
}

func newSpan(rs ptrace.ResourceSpans, name string) ptrace.Span {
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName(name)
	s.SetTraceID(pcommon.TraceID{1, 2, 3})
	s.SetSpanID(pcommon.SpanID{byte(len(name))})
	return s
}

// everyForm is a trace with content in every form the processor handles;
// it returns the canaries by span name.
func everyForm(tenant string) (ptrace.Traces, map[string][]string) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.ServiceName, "chatbot")
	if tenant != "" {
		rs.Resource().Attributes().PutStr(conventions.TenantAttribute, tenant)
	}
	want := map[string][]string{}
	n := 0
	next := func(span string) string {
		n++
		want[span] = append(want[span], canary(n))
		return canary(n)
	}

	s := newSpan(rs, "chat semconv")
	a := s.Attributes()
	a.PutStr(conventions.OperationName, "chat")
	a.PutStr(conventions.RequestModel, "gpt-4o")
	a.PutInt(conventions.UsageInput, 12)
	a.PutStr(conventions.InputMessages, `[{"role":"user","parts":[{"type":"text","content":"`+next("chat semconv")+`"}]}]`)
	out := a.PutEmptySlice(conventions.OutputMessages).AppendEmpty().SetEmptyMap()
	out.PutStr("role", "assistant")
	part := out.PutEmptySlice("parts").AppendEmpty().SetEmptyMap()
	part.PutStr("type", "text")
	part.PutStr("content", next("chat semconv"))
	a.PutStr(conventions.SystemInstructions, `[{"type":"text","content":"`+next("chat semconv")+`"}]`)
	a.PutStr(conventions.ToolDefinitions, `[{"type":"function","name":"lookup","description":"`+next("chat semconv")+`"}]`)

	s = newSpan(rs, "legacy")
	s.Attributes().PutStr(conventions.System, "openai")
	s.Attributes().PutStr(conventions.Prompt, next("legacy"))
	s.Attributes().PutStr(conventions.Completion, next("legacy"))

	s = newSpan(rs, "openllmetry")
	a = s.Attributes()
	a.PutStr(conventions.System, "openai")
	a.PutStr("gen_ai.prompt.0.role", "system")
	a.PutStr("gen_ai.prompt.0.content", next("openllmetry"))
	a.PutStr("gen_ai.prompt.1.role", "user")
	a.PutStr("gen_ai.prompt.1.content", next("openllmetry"))
	a.PutStr("gen_ai.completion.0.content", next("openllmetry"))
	a.PutStr("gen_ai.completion.0.tool_calls.0.arguments", `{"card":"`+next("openllmetry")+`"}`)
	a.PutStr("gen_ai.usage.prompt_tokens", "7")
	a.PutStr("llm.request.functions.0.name", "lookup_account")
	a.PutStr("llm.request.functions.0.description", next("openllmetry"))
	a.PutStr("traceloop.prompt.template", "Answer {{name}}: "+next("openllmetry"))
	a.PutStr("traceloop.prompt.template_variables", `{"name":"`+next("openllmetry")+`"}`)
	a.PutStr("traceloop.prompt.key", "support-answer")

	s = newSpan(rs, "openllmetry workflow")
	a = s.Attributes()
	a.PutStr("traceloop.span.kind", "workflow")
	a.PutStr("traceloop.entity.name", "answer_ticket")
	a.PutStr("traceloop.entity.input", `{"args":["`+next("openllmetry workflow")+`"]}`)
	a.PutStr("traceloop.entity.output", `"`+next("openllmetry workflow")+`"`)

	s = newSpan(rs, "mcp")
	a = s.Attributes()
	a.PutStr("mcp.method.name", "tools/call")
	a.PutStr("mcp.request.argument", `{"iban":"`+next("mcp")+`"}`)
	a.PutStr("mcp.response.value", next("mcp"))

	// OpenLLMetry's vector-database instrumentations put the query vector
	// and each result's document on span events.
	s = newSpan(rs, "vector db")
	s.Attributes().PutStr(conventions.DBSystem, "chroma")
	s.Attributes().PutStr("db.operation", "query")
	ev := s.Events().AppendEmpty()
	ev.SetName("db.query.embeddings")
	ev.Attributes().PutStr("db.query.embeddings.vector", "["+next("vector db")+"]")
	ev = s.Events().AppendEmpty()
	ev.SetName("db.query.result")
	ev.Attributes().PutStr("db.query.result.id", "doc-7")
	ev.Attributes().PutDouble("db.query.result.distance", 0.12)
	ev.Attributes().PutStr("db.query.result.document", next("vector db"))

	s = newSpan(rs, "events")
	ev = s.Events().AppendEmpty()
	ev.SetName("gen_ai.content.prompt")
	ev.Attributes().PutStr(conventions.Prompt, `[{"role":"user","content":"`+next("events")+`"}]`)
	ev = s.Events().AppendEmpty()
	ev.SetName("gen_ai.content.completion")
	ev.Attributes().PutStr(conventions.Completion, next("events"))
	ev = s.Events().AppendEmpty()
	ev.SetName("gen_ai.client.inference.operation.details")
	ev.Attributes().PutStr(conventions.InputMessages, `[{"role":"user","parts":[{"type":"text","content":"`+next("events")+`"}]}]`)
	ev.Attributes().PutStr(conventions.OutputMessages, `[{"role":"assistant","parts":[{"type":"text","content":"`+next("events")+`"}]}]`)
	ev.Attributes().PutStr(conventions.ResponseID, "resp-1")
	ev = s.Events().AppendEmpty()
	ev.SetName("gen_ai.user.message")
	ev.Attributes().PutStr(conventions.System, "openai")
	ev.Attributes().PutStr("content", next("events"))
	ev = s.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.message", "boom")

	s = newSpan(rs, "tool")
	s.Attributes().PutStr(conventions.OperationName, "execute_tool")
	s.Attributes().PutStr("gen_ai.tool.call.arguments", `{"phone":"`+next("tool")+`"}`)
	s.Attributes().PutStr("gen_ai.tool.call.result", next("tool"))

	s = newSpan(rs, "openinference")
	a = s.Attributes()
	a.PutStr(conventions.OpenInferenceKind, "LLM")
	a.PutStr("llm.model_name", "gpt-4o-mini")
	a.PutStr(conventions.InputValue, `{"question":"`+next("openinference")+`"}`)
	a.PutStr("input.mime_type", "application/json")
	a.PutStr(conventions.OutputValue, next("openinference"))
	a.PutStr("llm.input_messages.0.message.role", "user")
	a.PutStr("llm.input_messages.0.message.content", next("openinference"))
	a.PutStr("llm.output_messages.0.message.content", next("openinference"))
	a.PutStr("llm.prompt_template.variables", `{"name":"`+next("openinference")+`"}`)
	a.PutStr("llm.tools.0.tool.json_schema", `{"description":"`+next("openinference")+`"}`)
	a.PutInt("llm.token_count.prompt", 12)
	// The invocation parameters hold the Responses API's instructions;
	// the model and sampling parameters in them are metadata.
	a.PutStr(conventions.InvocationParameters, `{"model":"gpt-4o-mini","temperature":0.3,"instructions":"`+next("openinference")+`"}`)

	// The Vercel AI SDK's own keys; its response ID and timings stay.
	s = newSpan(rs, "vercel ai")
	a = s.Attributes()
	a.PutStr("ai.operationId", "ai.generateText.doGenerate")
	a.PutStr("ai.prompt.messages", `[{"role":"user","content":"`+next("vercel ai")+`"}]`)
	a.PutStr("ai.response.text", next("vercel ai"))
	a.PutStr("ai.toolCall.args", `{"q":"`+next("vercel ai")+`"}`)
	a.PutStr("ai.response.id", "chatcmpl-v1")
	a.PutDouble("ai.response.msToFirstChunk", 120)

	s = newSpan(rs, "openinference embedding")
	a = s.Attributes()
	a.PutStr(conventions.OpenInferenceKind, "EMBEDDING")
	a.PutStr("embedding.embeddings.0.embedding.text", next("openinference embedding"))

	// A retriever's and a reranker's document texts are content; the
	// documents' IDs, scores and versions are evidence and stay.
	s = newSpan(rs, "openinference retriever")
	a = s.Attributes()
	a.PutStr(conventions.OpenInferenceKind, "RETRIEVER")
	a.PutStr(conventions.InputValue, next("openinference retriever"))
	for i := range 2 {
		d := fmt.Sprintf("retrieval.documents.%d.document.", i)
		a.PutStr(d+"id", fmt.Sprintf("doc-%d", i))
		a.PutDouble(d+"score", 0.5)
		a.PutStr(d+"metadata.version", "v3")
		a.PutStr(d+"content", next("openinference retriever"))
	}
	s = newSpan(rs, "openinference reranker")
	a = s.Attributes()
	a.PutStr(conventions.OpenInferenceKind, "RERANKER")
	a.PutStr("reranker.query", next("openinference reranker"))
	a.PutStr("reranker.input_documents.0.document.id", "doc-0")
	a.PutStr("reranker.input_documents.0.document.content", next("openinference reranker"))
	a.PutStr("reranker.output_documents.0.document.id", "doc-0")
	a.PutStr("reranker.output_documents.0.document.content", next("openinference reranker"))

	s = newSpan(rs, "plain")
	s.Attributes().PutStr(conventions.HTTPRoute, "/health")
	return td, want
}

func marshalTraces(t testing.TB, td ptrace.Traces) []byte {
	pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	return append(pb, js...)
}

// refs returns every reference left on a map.
func refs(attrs pcommon.Map) []string {
	var out []string
	for k, v := range attrs.All() {
		if strings.HasSuffix(k, "_ref") {
			out = append(out, v.Str())
		}
	}
	return out
}

// fetch reads every reference back from the store and joins the content.
func fetch(t testing.TB, st contentstore.Store, rs []string) string {
	t.Helper()
	var b strings.Builder
	for _, s := range rs {
		ref, err := contentstore.ParseRef(s)
		if err != nil {
			t.Fatalf("reference %q: %v", s, err)
		}
		c, err := st.Get(ctx, ref)
		if err != nil {
			t.Fatalf("get %s: %v", s, err)
		}
		b.Write(c)
	}
	return b.String()
}

func spansByName(td ptrace.Traces) map[string]ptrace.Span {
	out := map[string]ptrace.Span{}
	for _, rs := range td.ResourceSpans().All() {
		for _, ss := range rs.ScopeSpans().All() {
			for _, s := range ss.Spans().All() {
				out[s.Name()] = s
			}
		}
	}
	return out
}

func TestEveryContentFormMovesToTheStore(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	in, want := everyForm("acme")
	out := hs.consumeTraces(t, in)

	raw := marshalTraces(t, out)
	for _, cs := range want {
		for _, c := range cs {
			if bytes.Contains(raw, []byte(c)) {
				t.Fatalf("content %q left the processor", c)
			}
			if bytes.Contains(raw, []byte(c[:10])) {
				t.Fatalf("part of content %q left the processor", c)
			}
		}
	}
	spans := spansByName(out)
	for name, cs := range want {
		s := spans[name]
		all := refs(s.Attributes())
		for _, ev := range s.Events().All() {
			all = append(all, refs(ev.Attributes())...)
		}
		stored := fetch(t, st, all)
		for _, c := range cs {
			if !strings.Contains(stored, c) {
				t.Errorf("%s: %q not retrievable through its references", name, c)
			}
		}
		for _, r := range all {
			if !strings.HasPrefix(r, "docket-content://acme/") {
				t.Errorf("%s: reference %s not scoped to the tenant", name, r)
			}
		}
		if v, _ := s.Attributes().Get(AttrStatus); v.Str() != StatusStored {
			t.Errorf("%s: status %q", name, v.Str())
		}
		if v, _ := s.Attributes().Get(AttrBytes); v.Int() <= 0 {
			t.Errorf("%s: bytes %d", name, v.Int())
		}
	}

	chat := spans["chat semconv"].Attributes()
	for _, k := range []string{conventions.InputRef, conventions.OutputRef, conventions.SystemInstructionsRef, conventions.ToolDefinitionsRef} {
		if _, ok := chat.Get(k); !ok {
			t.Errorf("chat span lacks %s", k)
		}
	}
	if v, _ := chat.Get(conventions.RequestModel); v.Str() != "gpt-4o" {
		t.Error("metadata removed from the span")
	}
	oll := spans["openllmetry"].Attributes()
	for _, k := range []string{"gen_ai.prompt_ref", "gen_ai.completion_ref", "llm.request.functions_ref",
		"traceloop.prompt.template_ref", "traceloop.prompt.template_variables_ref", "traceloop.prompt.key"} {
		if _, ok := oll.Get(k); !ok {
			t.Errorf("openllmetry span lacks %s: %v", k, oll.AsRaw())
		}
	}
	if oll.Len() != 10 {
		t.Errorf("openllmetry span: %v", oll.AsRaw())
	}
	vdb := spans["vector db"].Events()
	for k, want := range map[string]string{"db.query.result.id": "doc-7", "db.query.result.document_ref": "docket-content://acme/retrieval.documents/"} {
		if v, _ := vdb.At(1).Attributes().Get(k); !strings.HasPrefix(v.AsString(), want) {
			t.Errorf("vector db result event: %s = %q: %v", k, v.AsString(), vdb.At(1).Attributes().AsRaw())
		}
	}
	oi := spans["openinference"].Attributes()
	for _, k := range []string{"input.value_ref", "output.value_ref", "llm.input_messages_ref", "llm.output_messages_ref",
		"llm.prompt_template.variables_ref", "llm.tools_ref"} {
		if _, ok := oi.Get(k); !ok {
			t.Errorf("openinference span lacks %s: %v", k, oi.AsRaw())
		}
	}
	vercel := spans["vercel ai"].Attributes()
	for _, k := range []string{"ai.prompt.messages_ref", "ai.response.text_ref", "ai.response.id", "ai.response.msToFirstChunk"} {
		if _, ok := vercel.Get(k); !ok {
			t.Errorf("vercel ai span lacks %s: %v", k, vercel.AsRaw())
		}
	}
	if v, _ := oi.Get(conventions.RequestModel); v.Str() != "gpt-4o-mini" {
		t.Errorf("the requested model was not lifted out of llm.invocation_parameters: %v", oi.AsRaw())
	}
	if v, _ := oi.Get(conventions.RequestTemperature); v.Double() != 0.3 {
		t.Errorf("the temperature was not lifted out of llm.invocation_parameters: %v", oi.AsRaw())
	}
	if _, ok := oi.Get("llm.invocation_parameters_ref"); !ok {
		t.Errorf("llm.invocation_parameters not moved: %v", oi.AsRaw())
	}
	for _, k := range []string{"input.mime_type", "llm.model_name", "llm.token_count.prompt", conventions.OpenInferenceKind} {
		if _, ok := oi.Get(k); !ok {
			t.Errorf("openinference span lost its metadata %s", k)
		}
	}
	ret := spans["openinference retriever"].Attributes()
	for _, k := range []string{"retrieval.documents_ref", "input.value_ref", "retrieval.documents.0.document.id", "retrieval.documents.1.document.score",
		"retrieval.documents.1.document.metadata.version"} {
		if _, ok := ret.Get(k); !ok {
			t.Errorf("retriever span lacks %s: %v", k, ret.AsRaw())
		}
	}
	rr := spans["openinference reranker"].Attributes()
	for _, k := range []string{"reranker.query_ref", "reranker.input_documents_ref", "reranker.output_documents_ref",
		"reranker.input_documents.0.document.id", "reranker.output_documents.0.document.id"} {
		if _, ok := rr.Get(k); !ok {
			t.Errorf("reranker span lacks %s: %v", k, rr.AsRaw())
		}
	}
	evs := spans["events"].Events()
	if v, _ := evs.At(2).Attributes().Get(conventions.ResponseID); v.Str() != "resp-1" {
		t.Error("event metadata removed")
	}
	if _, ok := evs.At(3).Attributes().Get(AttrAttributesRef); !ok {
		t.Errorf("gen_ai.user.message event: %v", evs.At(3).Attributes().AsRaw())
	}
	if v, _ := evs.At(4).Attributes().Get("exception.message"); v.Str() != "boom" {
		t.Error("a non-GenAI event was changed")
	}
	plain := spans["plain"].Attributes()
	if _, ok := plain.Get(AttrStatus); ok || plain.Len() != 1 {
		t.Errorf("span without content changed: %v", plain.AsRaw())
	}
}

func logWith(event string, body func(pcommon.Value), attrs map[string]string) plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetEventName(event)
	if body != nil {
		body(lr.Body())
	}
	for k, v := range attrs {
		lr.Attributes().PutStr(k, v)
	}
	return ld
}

func TestGenAILogRecords(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	for _, tc := range []struct {
		name     string
		in       plog.Logs
		canaries []string
		kept     map[string]string
	}{
		{"user message body map", logWith("gen_ai.user.message", func(v pcommon.Value) {
			m := v.SetEmptyMap()
			m.PutStr("content", canary(1))
			m.PutStr("role", "user")
		}, map[string]string{conventions.System: "openai"}), []string{canary(1)}, map[string]string{conventions.System: "openai"}},
		{"system message body string", logWith("gen_ai.system.message", func(v pcommon.Value) { v.SetStr(canary(2)) }, nil), []string{canary(2)}, nil},
		{"choice", logWith("gen_ai.choice", func(v pcommon.Value) {
			m := v.SetEmptyMap()
			m.PutInt("index", 0)
			m.PutStr("finish_reason", "stop")
			m.PutEmptyMap("message").PutStr("content", canary(3))
		}, nil), []string{canary(3)}, nil},
		{"event name as attribute, content in attributes", logWith("", nil, map[string]string{
			conventions.EventNameAttribute: "gen_ai.assistant.message", "content": canary(4), "tool_calls": `[{"arguments":"` + canary(5) + `"}]`, "role": "assistant",
		}), []string{canary(4), canary(5)}, map[string]string{conventions.EventNameAttribute: "gen_ai.assistant.message", "role": "assistant"}},
		{"tool message", logWith("gen_ai.tool.message", func(v pcommon.Value) { v.SetEmptyMap().PutStr("content", canary(6)) }, map[string]string{"id": "call_1"}),
			[]string{canary(6)}, map[string]string{"id": "call_1"}},
		{"operation details", logWith("gen_ai.client.inference.operation.details", nil, map[string]string{
			conventions.InputMessages:  `[{"role":"user","parts":[{"type":"text","content":"` + canary(7) + `"}]}]`,
			conventions.OutputMessages: canary(8), conventions.SystemInstructions: canary(9), conventions.OperationName: "chat",
		}), []string{canary(7), canary(8), canary(9)}, map[string]string{conventions.OperationName: "chat"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := hs.consumeLogs(t, tc.in)
			lr := out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			raw, _ := (&plog.ProtoMarshaler{}).MarshalLogs(out)
			for _, c := range tc.canaries {
				if bytes.Contains(raw, []byte(c)) {
					t.Fatalf("content left: %q", c)
				}
			}
			if lr.Body().Type() != pcommon.ValueTypeEmpty {
				t.Fatalf("body kept: %v", lr.Body().AsRaw())
			}
			stored := fetch(t, st, refs(lr.Attributes()))
			for _, c := range tc.canaries {
				if !strings.Contains(stored, c) {
					t.Fatalf("%q not in the store", c)
				}
			}
			for k, v := range tc.kept {
				if got, ok := lr.Attributes().Get(k); !ok || got.Str() != v {
					t.Errorf("metadata %s lost: %v", k, lr.Attributes().AsRaw())
				}
			}
			if v, _ := lr.Attributes().Get(AttrStatus); v.Str() != StatusStored {
				t.Fatalf("status %q", v.Str())
			}
		})
	}
	// Ordinary logs are not touched.
	plain := logWith("", func(v pcommon.Value) { v.SetStr("GET /health 200") }, nil)
	out := hs.consumeLogs(t, plain)
	lr := out.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	if lr.Body().Str() != "GET /health 200" || lr.Attributes().Len() != 0 {
		t.Fatalf("ordinary log changed: %v %v", lr.Body().AsRaw(), lr.Attributes().AsRaw())
	}
}

func TestCapturePolicy(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	cfg := defaultConfig()
	off, on := false, true
	cfg.CaptureRules = []CaptureRule{
		{Tenant: "acme", Service: "support-bot", Capture: &on},
		{Tenant: "acme", Capture: &off},
	}
	hs := newHarness(t, cfg, h)

	in, want := everyForm("acme") // service chatbot: second rule, not captured
	out := hs.consumeTraces(t, in)
	raw := marshalTraces(t, out)
	for name, cs := range want {
		for _, c := range cs {
			if bytes.Contains(raw, []byte(c)) {
				t.Fatalf("not captured content %q was passed through", c)
			}
		}
		s := spansByName(out)[name]
		if v, _ := s.Attributes().Get(AttrStatus); v.Str() != StatusNotCaptured {
			t.Errorf("%s: status %q, want not_captured", name, v.Str())
		}
		if v, _ := s.Attributes().Get(AttrBytes); v.Int() <= 0 {
			t.Errorf("%s: dropped bytes not reported", name)
		}
		if r := refs(s.Attributes()); len(r) != 0 {
			t.Errorf("%s: references %v for content not captured", name, r)
		}
	}
	chat := spansByName(out)["chat semconv"].Attributes()
	if v, _ := chat.Get("docket.content.status.gen_ai.input.messages"); v.Str() != StatusNotCaptured {
		t.Errorf("per-item status missing: %v", chat.AsRaw())
	}
	n := 0
	_ = st.List(ctx, contentstore.Selection{}, func(contentstore.ObjectInfo) error { n++; return nil })
	if n != 0 {
		t.Fatalf("%d objects stored for a tenant that is not captured", n)
	}

	// Other tenants fall to the default (capture), and the rule for
	// support-bot wins over the tenant-wide rule.
	in, _ = everyForm("globex")
	if v, _ := spansByName(hs.consumeTraces(t, in))["legacy"].Attributes().Get(AttrStatus); v.Str() != StatusStored {
		t.Fatalf("globex: %q", v.Str())
	}
	in, _ = everyForm("acme")
	in.ResourceSpans().At(0).Resource().Attributes().PutStr(conventions.ServiceName, "support-bot")
	if v, _ := spansByName(hs.consumeTraces(t, in))["legacy"].Attributes().Get(AttrStatus); v.Str() != StatusStored {
		t.Fatalf("acme support-bot: %q", v.Str())
	}
}

func TestSizeLimitAndQuota(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{MaxObjectBytes: 1 << 20, MaxTotalBytes: 3 << 20}))
	hs := newHarness(t, defaultConfig(), h)
	huge := strings.Repeat("0123456789", 1<<20) // 10 MiB
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	s := newSpan(rs, "huge")
	s.Attributes().PutStr(conventions.InputMessages, huge)
	s.Attributes().PutStr(conventions.OutputMessages, canary(1))
	sl := newSpan(rs, "huge structured").Attributes().PutEmptySlice(conventions.InputMessages)
	for range 200 {
		sl.AppendEmpty().SetStr(strings.Repeat("y", 8<<10))
	}
	out := spansByName(hs.consumeTraces(t, td))

	a := out["huge"].Attributes()
	if _, ok := a.Get(conventions.InputMessages); ok {
		t.Fatal("over-limit content left on the span")
	}
	if v, _ := a.Get(AttrStatus); v.Str() != StatusPartial {
		t.Fatalf("status %q, want partial (one stored, one over the limit)", v.Str())
	}
	if v, _ := a.Get("docket.content.status.gen_ai.input.messages"); v.Str() != StatusOverLimit {
		t.Fatalf("item status %q", v.Str())
	}
	if v, _ := a.Get(AttrBytes); v.Int() != int64(len(huge)+len(canary(1))) {
		t.Fatalf("bytes %d", v.Int())
	}
	if fetch(t, st, refs(a)) != canary(1) {
		t.Fatal("the content within the limit was not stored")
	}
	b := out["huge structured"].Attributes()
	if v, _ := b.Get(AttrStatus); v.Str() != StatusOverLimit {
		t.Fatalf("structured over limit: %q", v.Str())
	}
	if v, _ := b.Get(AttrBytes); v.Int() < 200*8<<10 {
		t.Fatalf("structured size %d", v.Int())
	}

	// Fill the tenant's quota (by default half the store's): further
	// content is over_quota, never on the span.
	statuses := map[string]int{}
	for i := range 8 {
		td := ptrace.NewTraces()
		newSpan(td.ResourceSpans().AppendEmpty(), "fill").Attributes().PutStr(conventions.Prompt, fmt.Sprintf("%d%s", i, strings.Repeat("z", 700<<10)))
		v, _ := spansByName(hs.consumeTraces(t, td))["fill"].Attributes().Get(AttrStatus)
		statuses[v.Str()]++
	}
	if statuses[StatusStored] != 2 || statuses[StatusOverQuota] != 6 {
		t.Fatalf("statuses filling a 1.5 MiB tenant quota with 700 KiB items: %v", statuses)
	}
	if u := st.Usage(); u.UsedBytes > 3<<20 {
		t.Fatalf("store grew past its quota: %d", u.UsedBytes)
	}
}

func TestTenants(t *testing.T) {
	h, _ := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	for _, tc := range []struct {
		tenant, status, prefix string
	}{
		{"", StatusStored, "docket-content://default/"},
		{"bad\xffutf8", StatusStored, "docket-content://default/"},
		{"고객사", StatusStored, "docket-content://%EA%B3%A0%EA%B0%9D%EC%82%AC/"},
		{strings.Repeat("t", 200), StatusInvalidTenant, ""},
	} {
		in, _ := everyForm(tc.tenant)
		a := spansByName(hs.consumeTraces(t, in))["legacy"].Attributes()
		if v, _ := a.Get(AttrStatus); v.Str() != tc.status {
			t.Errorf("tenant %q: status %q, want %q", tc.tenant, v.Str(), tc.status)
		}
		r := refs(a)
		if tc.prefix == "" && len(r) != 0 || tc.prefix != "" && (len(r) != 2 || !strings.HasPrefix(r[0], tc.prefix)) {
			t.Errorf("tenant %q: references %v", tc.tenant, r)
		}
		if _, ok := a.Get(conventions.Prompt); ok {
			t.Errorf("tenant %q: content left", tc.tenant)
		}
	}
}

func TestSameContentIsOneObject(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	for i := range 100 {
		a := newSpan(rs, fmt.Sprint("call ", i)).Attributes()
		// The same instructions, serialized with varying whitespace.
		a.PutStr(conventions.SystemInstructions, `[{"type":"text",`+strings.Repeat(" ", i%3)+`"content":"You are a helpful assistant."}]`)
	}
	out := hs.consumeTraces(t, td)
	seen := map[string]bool{}
	for _, s := range spansByName(out) {
		v, _ := s.Attributes().Get(conventions.SystemInstructionsRef)
		seen[v.Str()] = true
	}
	n := 0
	_ = st.List(ctx, contentstore.Selection{}, func(contentstore.ObjectInfo) error { n++; return nil })
	if len(seen) != 1 || n != 1 {
		t.Fatalf("%d references, %d objects for one message", len(seen), n)
	}
}

// The S3 server goes away: spans still leave, without content, as
// store_unavailable; when it returns content is stored again.
func TestStoreUnavailable(t *testing.T) {
	srv := s3test.Start(t)
	c := contentstore.NewDefaultConfig()
	c.S3 = configoptional.Some(contentstore.S3Config{Endpoint: srv.Endpoint, Bucket: "contentref", AccessKey: srv.AccessKey,
		SecretKey: configopaque.String(srv.SecretKey), Insecure: true, CreateBucket: true, ObjectLock: true, Timeout: 5e9})
	c.Secret = testSecret
	h, st := storeExt(t, c)
	hs := newHarness(t, defaultConfig(), h)

	consume := func() (ptrace.Traces, map[string][]string) {
		in, want := everyForm("acme")
		return hs.consumeTraces(t, in), want
	}
	out, _ := consume()
	if v, _ := spansByName(out)["legacy"].Attributes().Get(AttrStatus); v.Str() != StatusStored {
		t.Fatalf("before the outage: %q", v.Str())
	}
	srv.Stop()
	out, want := consume()
	raw := marshalTraces(t, out)
	for name, cs := range want {
		for _, c := range cs {
			if bytes.Contains(raw, []byte(c)) {
				t.Fatalf("content passed through while the store was down: %q", c)
			}
		}
		if v, _ := spansByName(out)[name].Attributes().Get(AttrStatus); v.Str() != StatusStoreUnavailable {
			t.Errorf("%s during the outage: %q", name, v.Str())
		}
	}
	srv.Restart()
	for start := 0; ; start++ {
		out, want = consume()
		v, _ := spansByName(out)["chat semconv"].Attributes().Get(AttrStatus)
		if v.Str() == StatusStored {
			break
		}
		if start == 100 {
			t.Fatalf("store never came back: %q", v.Str())
		}
		time.Sleep(100 * time.Millisecond)
	}
	s := spansByName(out)["chat semconv"]
	if got := fetch(t, st, refs(s.Attributes())); !strings.Contains(got, want["chat semconv"][0]) {
		t.Fatal("content after recovery not retrievable")
	}
}

func TestMetricsHaveFixedLabels(t *testing.T) {
	h, _ := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	in, want := everyForm("acme")
	hs.consumeTraces(t, in)
	var rm metricdata.ResourceMetrics
	if err := hs.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != metadata.ScopeName {
			continue // the processorhelper's own metrics
		}
		for _, m := range sm.Metrics {
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				sig, _ := dp.Attributes.Value("signal")
				st, _ := dp.Attributes.Value("status")
				if m.Name == metricUnknown {
					st, _ = dp.Attributes.Value("family")
					if !knownFamily(st.AsString()) {
						t.Errorf("%s has family %v", m.Name, st)
					}
				} else if severity(st.AsString()) < 0 {
					t.Errorf("%s has status %v", m.Name, st)
				}
				if dp.Attributes.Len() != 2 || sig.AsString() != "traces" {
					t.Errorf("%s has labels %v", m.Name, dp.Attributes)
				}
				got[m.Name+"/"+st.AsString()] += dp.Value
			}
		}
	}
	items := 0
	for _, cs := range want {
		items += len(cs)
	}
	// Every canary is one item, except the two OpenLLMetry prompts (one
	// item), the completion with its tool call (one item) and the two
	// retrieved documents' texts (one item).
	if got[metricItems+"/stored"] != int64(items-3) || got[metricRecords+"/stored"] != int64(len(want)) || got[metricBytes+"/stored"] <= 0 {
		t.Fatalf("metrics %v (items %d, records %d)", got, items, len(want))
	}
}

func knownFamily(name string) bool {
	for _, f := range append(conventions.Families, conventions.GenAI) {
		if f.Name == name {
			return true
		}
	}
	return false
}

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{StatusStored, StatusStored}, StatusStored},
		{[]string{StatusNotCaptured}, StatusNotCaptured},
		{[]string{StatusStored, StatusOverLimit}, StatusPartial},
		{[]string{StatusPartial, StatusStored}, StatusPartial},
		{[]string{StatusOverLimit, StatusStoreUnavailable}, StatusStoreUnavailable},
		{[]string{StatusOverLimit, StatusOverQuota}, StatusOverQuota},
		{[]string{StatusInvalidTenant, StatusOverLimit}, StatusOverLimit},
		{nil, ""},
	} {
		if got := summarize(tc.in); got != tc.want {
			t.Errorf("summarize(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestContentKeyIndex(t *testing.T) {
	for attr, want := range map[string]string{
		conventions.InputMessages:                         conventions.InputMessages,
		"gen_ai.prompt.0.content":                         conventions.Prompt,
		"gen_ai.prompts":                                  "",
		"retrieval.documents":                             "retrieval.documents",
		"retrieval.documents.0.document.content":          "retrieval.documents",
		"retrieval.documents.12.document.content.chunk.0": "retrieval.documents",
		"retrieval.documents.0.document.id":               "",
		"retrieval.documents.0.document.contents":         "",
		"retrieval.documents.x.document.content":          "",
		"retrieval.documents.0":                           "",
		"retrieval.documents_ref":                         "",
		"reranker.query":                                  "reranker.query",
		"reranker.output_documents.3.document.content":    "reranker.output_documents",
		"reranker.output_documents.3.document.score":      "",
		"traceloop.prompt.template":                       "traceloop.prompt.template",
		"traceloop.prompt.template_variables":             "traceloop.prompt.template_variables",
		"traceloop.prompt.key":                            "",
		"llm.request.functions.0.parameters":              conventions.LLMRequestFunctions,
		"llm.request.type":                                "",
		"db.query.result.document":                        "db.query.result.document",
		"db.query.result.id":                              "",
		conventions.DBQueryText:                           "",
		conventions.DBStatement:                           "",
		conventions.HTTPRoute:                             "",
	} {
		got := ""
		if i := conventions.ContentIndex(attr); i >= 0 {
			got = conventions.ContentKeys[i].Name
		}
		if got != want {
			t.Errorf("%s: item %q, want %q", attr, got, want)
		}
	}
}

// TestContentKeysFitTheBitset: collectAttrs marks the keys found on one
// map in a bitset.
func TestContentKeysFitTheBitset(t *testing.T) {
	if n := len(conventions.ContentKeys); n > len(bitset{})*64 {
		t.Fatalf("%d content keys; collectAttrs holds %d", n, len(bitset{})*64)
	}
}
