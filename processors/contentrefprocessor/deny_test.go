package contentrefprocessor

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/processors/contentrefprocessor/internal/metadata"
)

// observed is a processor whose log and metrics are kept for inspection.
type observed struct {
	*harness
	logs *observer.ObservedLogs
}

func newObserved(t *testing.T, cfg *Config, h component.Host) observed {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	return observed{startHarness(t, cfg, h, set), logs}
}

// leaks returns the canaries found in the processor's log and metric
// labels.
func (o observed) leaks(t *testing.T, canaries []string) []string {
	t.Helper()
	var text strings.Builder
	for _, e := range o.logs.All() {
		fmt.Fprintln(&text, e.Message, e.ContextMap())
	}
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
				for _, dp := range sum.DataPoints {
					for _, kv := range dp.Attributes.ToSlice() {
						fmt.Fprintln(&text, kv.Key, kv.Value.String())
					}
				}
			}
		}
	}
	var out []string
	for _, c := range canaries {
		if strings.Contains(text.String(), c) {
			out = append(out, c)
		}
	}
	return out
}

// planter puts canaries on a map under random names, in every value type;
// each canary is part of its key's name too, so integers, doubles and bools
// are traced by their name.
type planter struct {
	rng      *rand.Rand
	canaries []string
}

// name is a random attribute name, dotted or not, that the contract does
// not know: such a name is unknown, whatever it holds.
func (p *planter) name() string {
	const letters = "abcdefghijklmnopqrstuvwxyz_"
	for {
		var b strings.Builder
		for i, n := 0, 1+p.rng.IntN(3); i < n; i++ {
			if i > 0 {
				b.WriteByte('.')
			}
			for j, m := 0, 3+p.rng.IntN(8); j < m; j++ {
				b.WriteByte(letters[p.rng.IntN(len(letters))])
			}
		}
		if s := b.String(); !conventions.IsMetadata(s) && !conventions.IsContent(s) {
			return s
		}
	}
}

func (p *planter) plant(attrs pcommon.Map) {
	for typ := range 7 {
		c := fmt.Sprintf("unk%d%08x", len(p.canaries), p.rng.Uint32())
		p.canaries = append(p.canaries, c)
		k := p.name() + "." + c
		switch typ {
		case 0:
			attrs.PutStr(k, "secret "+c)
		case 1:
			attrs.PutEmptySlice(k).AppendEmpty().SetStr(c)
		case 2:
			attrs.PutEmptyMap(k).PutEmptyMap("nested").PutStr("v", c)
		case 3:
			attrs.PutEmptyBytes(k).FromRaw([]byte(c))
		case 4:
			attrs.PutInt(k, p.rng.Int64())
		case 5:
			attrs.PutDouble(k, p.rng.Float64())
		case 6:
			attrs.PutBool(k, true)
		}
	}
}

func genAISpan(ss ptrace.ScopeSpans, name string) ptrace.Span {
	s := ss.Spans().AppendEmpty()
	s.SetName(name)
	s.SetTraceID(pcommon.TraceID{9})
	s.SetSpanID(pcommon.SpanID{byte(ss.Spans().Len())})
	s.Attributes().PutStr(conventions.OperationName, "chat")
	s.Attributes().PutStr(conventions.RequestModel, "gpt-4o")
	return s
}

// TestRandomUnknownKeysNeverLeave plants random unknown keys of every value
// type on GenAI spans of several families, their span events and GenAI log
// records: none may leave the processor, each must be in the store.
func TestRandomUnknownKeysNeverLeave(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	p := &planter{rng: rand.New(rand.NewPCG(seed, 1))}
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	o := newObserved(t, defaultConfig(), h)

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	for _, scope := range []string{"", "ai", "com.anthropic.sdk.typescript", "@traceloop/instrumentation-openai", "openinference.instrumentation.openai"} {
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName(scope)
		s := genAISpan(ss, "span "+scope)
		p.plant(s.Attributes())
		for _, ev := range []string{"gen_ai.choice", "custom.event"} {
			e := s.Events().AppendEmpty()
			e.SetName(ev)
			p.plant(e.Attributes())
		}
	}
	oi := genAISpan(rs.ScopeSpans().AppendEmpty(), "openinference by marker")
	oi.Attributes().Clear()
	oi.Attributes().PutStr(conventions.OpenInferenceKind, "LLM")
	p.plant(oi.Attributes())

	out := o.consumeTraces(t, td)
	raw := marshalTraces(t, out)
	var stored strings.Builder
	for _, s := range spansByName(out) {
		stored.WriteString(fetch(t, st, refs(s.Attributes())))
		for _, e := range s.Events().All() {
			stored.WriteString(fetch(t, st, refs(e.Attributes())))
		}
	}

	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName("@opentelemetry/instrumentation-openai")
	for _, ev := range []string{"gen_ai.user.message", "gen_ai.something.new"} {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName(ev)
		p.plant(lr.Attributes())
		c := fmt.Sprintf("body%08x", p.rng.Uint32())
		p.canaries = append(p.canaries, c)
		lr.Body().SetEmptyMap().PutStr("x", c)
	}
	outLogs := o.consumeLogs(t, ld)
	pb, err := (&plog.ProtoMarshaler{}).MarshalLogs(outLogs)
	if err != nil {
		t.Fatal(err)
	}
	js, err := (&plog.JSONMarshaler{}).MarshalLogs(outLogs)
	if err != nil {
		t.Fatal(err)
	}
	raw = append(append(raw, pb...), js...)
	for _, lr := range outLogs.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().All() {
		stored.WriteString(fetch(t, st, refs(lr.Attributes())))
	}

	leaked := 0
	for _, c := range p.canaries {
		if bytes.Contains(raw, []byte(c)) {
			leaked++
			t.Errorf("canary %s left the processor", c)
		}
		if !strings.Contains(stored.String(), c) {
			t.Errorf("canary %s not retrievable through the references left", c)
		}
	}
	if l := o.leaks(t, p.canaries); len(l) > 0 {
		t.Errorf("canaries in the processor's log or metric labels: %v", l)
	}
	t.Logf("%d canaries planted, %d left the processor", len(p.canaries), leaked)
}

// plantedCall is one GenAI call span of everyContentKey and the canaries
// that belong to it: on the span, its events and the log records carrying
// its context.
type plantedCall struct {
	trace    pcommon.TraceID
	canaries []string
}

// everyContentKey puts a canary under every content key of the contract
// (CONVENTIONS.md's survey) and every content event, with random unknown
// keys next to them, on spans, span events and log records carrying the
// span's context: one call per key, its own trace. It returns the
// canaries by call.
func everyContentKey(p *planter) (ptrace.Traces, plog.Logs, []plantedCall) {
	now := time.Now()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	ss := rs.ScopeSpans().AppendEmpty()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	sl := rl.ScopeLogs().AppendEmpty()
	var calls []plantedCall
	n := 0
	next := func() string {
		n++
		c := canary(n)
		calls[len(calls)-1].canaries = append(calls[len(calls)-1].canaries, c)
		return c
	}
	put := func(attrs pcommon.Map, k conventions.ContentKey) {
		name := k.Name
		if k.Leaf != "" {
			name += ".0." + k.Leaf
		}
		attrs.PutStr(name, next())
	}
	plant := func(attrs pcommon.Map) {
		before := len(p.canaries)
		p.plant(attrs)
		calls[len(calls)-1].canaries = append(calls[len(calls)-1].canaries, p.canaries[before:]...)
	}
	call := func(name string) ptrace.Span {
		i := len(calls)
		s := genAISpan(ss, name)
		s.SetTraceID(pcommon.TraceID{0xca, byte(i >> 8), byte(i), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13})
		s.SetSpanID(pcommon.SpanID{0x5a, byte(i >> 8), byte(i), 1, 2, 3, 4, 5})
		s.SetStartTimestamp(pcommon.NewTimestampFromTime(now))
		s.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(time.Second)))
		calls = append(calls, plantedCall{trace: s.TraceID()})
		return s
	}
	record := func(s ptrace.Span, event string) plog.LogRecord {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName(event)
		lr.SetTraceID(s.TraceID())
		lr.SetSpanID(s.SpanID())
		lr.SetTimestamp(pcommon.NewTimestampFromTime(now))
		return lr
	}
	for i, k := range conventions.ContentKeys {
		s := call(fmt.Sprintf("key %d", i))
		put(s.Attributes(), k)
		plant(s.Attributes())
		e := s.Events().AppendEmpty()
		e.SetName("gen_ai.content.prompt")
		put(e.Attributes(), k)
		plant(e.Attributes())
		lr := record(s, "gen_ai.client.inference.operation.details")
		put(lr.Attributes(), k)
		plant(lr.Attributes())
	}
	for ev := range conventions.ContentEvents {
		s := call("event " + ev)
		lr := record(s, ev)
		lr.Body().SetStr(next())
		lr.Attributes().PutStr("content", next())
		e := s.Events().AppendEmpty()
		e.SetName(ev)
		e.Attributes().PutStr("content", next())
	}
	// Keys of CONVENTIONS.md that no content key lists: unknown on GenAI
	// telemetry, and so content all the same.
	s := call("unlisted")
	for _, k := range []string{"gen_ai.event.content", "lk.agent.text", "ai.result.text", "ai.telemetry.metadata.user", "ai.request.headers.x-note", "langfuse.trace.metadata.note"} {
		s.Attributes().PutStr(k, next())
	}
	return td, ld, calls
}

// exported is what the processor passed on, as OTLP protobuf and JSON.
func exported(t *testing.T, td ptrace.Traces, ld plog.Logs) []byte {
	t.Helper()
	raw := marshalTraces(t, td)
	pb, err := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	js, err := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(raw, pb...), js...)
}

// TestCanaryOverEveryContentKey: no canary of everyContentKey leaves the
// processor, and each is retrievable from the store through the references
// left.
func TestCanaryOverEveryContentKey(t *testing.T) {
	p := &planter{rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))}
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	o := newObserved(t, defaultConfig(), h)
	td, ld, calls := everyContentKey(p)

	outT := o.consumeTraces(t, td)
	outL := o.consumeLogs(t, ld)
	raw := exported(t, outT, outL)
	var stored strings.Builder
	for _, s := range spansByName(outT) {
		stored.WriteString(fetch(t, st, refs(s.Attributes())))
		for _, e := range s.Events().All() {
			stored.WriteString(fetch(t, st, refs(e.Attributes())))
		}
	}
	for _, lr := range outL.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().All() {
		stored.WriteString(fetch(t, st, refs(lr.Attributes())))
	}
	var all []string
	for _, c := range calls {
		all = append(all, c.canaries...)
	}
	leaked := 0
	for _, c := range all {
		if bytes.Contains(raw, []byte(c)) {
			leaked++
			t.Errorf("canary %q left the processor", c)
		}
		if !strings.Contains(stored.String(), c) {
			t.Errorf("canary %q not retrievable through the references left", c)
		}
	}
	if l := o.leaks(t, all); len(l) > 0 {
		t.Errorf("canaries in the processor's log or metric labels: %v", l)
	}
	t.Logf("%d content keys, %d canaries, %d left the processor", len(conventions.ContentKeys), len(all), leaked)
}

func TestNonGenAISpanUnchanged(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	s := newSpan(rs, "GET /orders")
	s.Attributes().PutStr(conventions.HTTPRequestMethod, "GET")
	s.Attributes().PutStr("order.note", "free text")
	s.Attributes().PutEmptySlice("order.items").AppendEmpty().SetStr("book")
	ev := s.Events().AppendEmpty()
	ev.SetName("exception")
	ev.Attributes().PutStr("exception.message", "boom")
	want := ptrace.NewTraces()
	td.CopyTo(want)
	out := hs.consumeTraces(t, td)
	if !bytes.Equal(marshalTraces(t, out), marshalTraces(t, want)) {
		t.Fatalf("a non-GenAI span was changed: %v", spansByName(out)["GET /orders"].Attributes().AsRaw())
	}

	// Configured for all telemetry, the same span keeps only metadata.
	all := defaultConfig()
	all.UnknownKeysScope = ScopeAll
	out = newHarness(t, all, h).consumeTraces(t, want)
	s = spansByName(out)["GET /orders"]
	a := s.Attributes()
	if v, _ := a.Get(conventions.HTTPRequestMethod); v.Str() != "GET" || a.Len() != 5 {
		t.Fatalf("all: %v", a.AsRaw())
	}
	if got := fetch(t, st, refs(a)); got != `{"order.items":["book"],"order.note":"free text"}` {
		t.Errorf("all: stored %q", got)
	}
	if got := fetch(t, st, refs(s.Events().At(0).Attributes())); got != `{"exception.message":"boom"}` {
		t.Errorf("all: event stored %q", got)
	}
}

func TestUnknownKeysConfig(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	span := func() ptrace.Traces {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
		s := genAISpan(rs.ScopeSpans().AppendEmpty(), "chat")
		s.Attributes().PutStr("app.feature", "search")
		s.Attributes().PutStr("app.note", canary(1))
		s.Attributes().PutInt("app.count", 3)
		s.Attributes().PutStr("acme.ticket", "T-1")
		return td
	}

	stored := defaultConfig()
	stored.MetadataKeys = []string{"app.feature"}
	stored.MetadataRules = []MetadataRule{{Tenant: "acme", Keys: []string{"acme.ticket"}}, {Tenant: "globex", Keys: []string{"app.note"}}}
	a := spansByName(newHarness(t, stored, h).consumeTraces(t, span()))["chat"].Attributes()
	if v, _ := a.Get("acme.ticket"); v.Str() != "T-1" {
		t.Errorf("the tenant's metadata key removed: %v", a.AsRaw())
	}
	if v, _ := a.Get("app.feature"); v.Str() != "search" {
		t.Errorf("configured metadata key removed: %v", a.AsRaw())
	}
	if v, _ := a.Get(conventions.UnknownKeys); v.Int() != 2 {
		t.Errorf("unknown count: %v", a.AsRaw())
	}
	ref, _ := a.Get(conventions.UnknownRef)
	if got := fetch(t, st, []string{ref.Str()}); got != `{"app.count":3,"app.note":"`+canary(1)+`"}` {
		t.Errorf("unknown item %q", got)
	}
	for _, k := range []string{"app.note", "app.count"} {
		if _, ok := a.Get(k); ok {
			t.Errorf("unknown key %s kept", k)
		}
	}

	dropped := defaultConfig()
	dropped.UnknownKeys = UnknownDrop
	hs := newHarness(t, dropped, h)
	a = spansByName(hs.consumeTraces(t, span()))["chat"].Attributes()
	if _, ok := a.Get(conventions.UnknownRef); ok || a.Len() != 3 {
		t.Errorf("drop: %v", a.AsRaw())
	}
	if v, _ := a.Get(conventions.UnknownKeys); v.Int() != 4 {
		t.Errorf("drop: unknown count: %v", a.AsRaw())
	}
	var rm metricdata.ResourceMetrics
	if err := hs.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counted := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sum, ok := m.Data.(metricdata.Sum[int64])
			if !ok || !strings.HasPrefix(m.Name, "otelcol_processor_contentref_") {
				continue
			}
			for _, dp := range sum.DataPoints {
				// Labels name a family and a signal, never a key.
				for _, kv := range dp.Attributes.ToSlice() {
					if kv.Key != "family" && kv.Key != "signal" && kv.Key != "status" {
						t.Errorf("%s: label %s", m.Name, kv.Key)
					}
				}
				if f, ok := dp.Attributes.Value("family"); ok && f.AsString() != conventions.GenAI.Name {
					continue
				}
				counted[m.Name] += dp.Value
			}
		}
	}
	// The span lost 4 unknown attributes, none stored.
	for name, want := range map[string]int64{metricUnknown: 4, metricDropped: 4, metricDroppedRecords: 1} {
		if counted[name] != want {
			t.Errorf("%s = %d, want %d", name, counted[name], want)
		}
	}
}

// TestInvocationParametersSplit: OpenInference's invocation parameters
// keep their sampling parameters as metadata; the tools and instructions
// in them go to the store.
func TestInvocationParametersSplit(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	s := newSpan(rs, "ChatCompletion")
	s.Attributes().PutStr(conventions.OpenInferenceKind, "LLM")
	s.Attributes().PutStr(conventions.InvocationParameters, fmt.Sprintf(
		`{"model":"gpt-4o","temperature":0.2,"instructions":%q,"tools":[{"type":"function","name":"lookup","description":%q}],"messages":[{"role":"user","content":%q}]}`,
		canary(1), canary(2), canary(3)))
	out := hs.consumeTraces(t, td)
	raw := marshalTraces(t, out)
	for i := 1; i <= 3; i++ {
		if bytes.Contains(raw, []byte(canary(i))) {
			t.Errorf("canary %d left in the invocation parameters", i)
		}
	}
	a := spansByName(out)["ChatCompletion"].Attributes()
	if v, _ := a.Get(conventions.RequestTemperature); v.Double() != 0.2 {
		t.Errorf("temperature not kept: %v", a.AsRaw())
	}
	if v, _ := a.Get(conventions.RequestModel); v.Str() != "gpt-4o" {
		t.Errorf("model not kept: %v", a.AsRaw())
	}
	got := fetch(t, st, refs(a))
	for i := 1; i <= 3; i++ {
		if !strings.Contains(got, canary(i)) {
			t.Errorf("canary %d not in the store", i)
		}
	}
}

// Retrieved documents' IDs, scores and versions stay on the span (the
// ledger's evidence of which documents were used); entries that carry
// anything else, such as the documents' text, move to the store whole.
func TestRetrievedDocumentsSplit(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	ids := `[{"id":"kb-1","score":0.9,"version":"3"}]`
	plain := newSpan(rs, "retrieval plain")
	plain.Attributes().PutStr(conventions.OperationName, "retrieval")
	plain.Attributes().PutStr(conventions.RetrievalDocuments, ids)
	withText := newSpan(rs, "retrieval text")
	withText.Attributes().PutStr(conventions.OperationName, "retrieval")
	withText.Attributes().PutStr(conventions.RetrievalDocuments, fmt.Sprintf(`[{"id":"kb-1","content":%q}]`, canary(1)))
	out := hs.consumeTraces(t, td)
	if bytes.Contains(marshalTraces(t, out), []byte(canary(1))) {
		t.Error("a retrieved document's text left the processor")
	}
	spans := spansByName(out)
	if v, _ := spans["retrieval plain"].Attributes().Get(conventions.RetrievalDocuments); v.Str() != ids {
		t.Errorf("document IDs not kept: %v", spans["retrieval plain"].Attributes().AsRaw())
	}
	if got := fetch(t, st, refs(spans["retrieval text"].Attributes())); !strings.Contains(got, canary(1)) {
		t.Error("the document's text is not in the store")
	}
}
