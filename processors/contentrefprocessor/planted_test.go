package contentrefprocessor

import (
	"bytes"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
)

// plant puts on attrs every kind of attribute only the collector may write,
// pointing at victim, and returns how many it put.
func plant(put func(k, v string), victim string) int64 {
	planted := map[string]string{
		conventions.InputRef:                  victim,
		"llm.tools_ref":                       victim,
		"retrieval.documents_ref":             "not even a reference",
		"my.own_ref":                          victim, // any *_ref holding a reference is read as one
		AttrBodyRef:                           victim,
		AttrAttributesRef:                     victim,
		AttrStatus:                            StatusStored,
		AttrBytes:                             "1",
		attrItemStatusPrefix + "body":         StatusStored,
		"docket.replay.of_trace_id":           "0102030405060708090a0b0c0d0e0f10",
		"docket.anything.else":                "planted",
		conventions.ContentKeys[0].RefName():  victim,
		conventions.ContentKeys[10].RefName(): victim,
	}
	for k, v := range planted {
		put(k, v)
	}
	return int64(len(planted))
}

// TestSendersCannotPlantReferences: a sender that knows a reference to
// another user's content (one tenant, one deployment) puts it on its own
// spans, span events and log records, with statuses and Docket attributes
// of its own making. Nothing of it leaves the processor: every reference
// and status on the output is one the processor wrote for content it
// stored.
func TestSendersCannotPlantReferences(t *testing.T) {
	h, st := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	hs := newHarness(t, defaultConfig(), h)
	res, err := st.Put(ctx, "acme", "input.messages", []byte("the victim's prompt"))
	if err != nil {
		t.Fatal(err)
	}
	victim := res.Ref.String()

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, "acme")
	rs.Resource().Attributes().PutStr("docket.tenant", "acme") // resources are the tenant processor's
	withContent := newSpan(rs, "with content")
	var want int64
	want += plant(withContent.Attributes().PutStr, victim)
	withContent.Attributes().PutStr(conventions.InputMessages, canary(1))
	ev := withContent.Events().AppendEmpty()
	ev.SetName("gen_ai.user.message")
	want += plant(ev.Attributes().PutStr, victim)
	ev.Attributes().PutStr("content", canary(2))
	bare := newSpan(rs, "no content")
	bare.Attributes().PutStr("git.branch_ref", "main") // a *_ref that is no reference stays (on a GenAI span it would be unknown)
	want += plant(bare.Attributes().PutStr, victim)
	bareEv := bare.Events().AppendEmpty()
	bareEv.SetName("exception")
	want += plant(bareEv.Attributes().PutStr, victim)

	out := hs.consumeTraces(t, td)
	if raw := marshalTraces(t, out); bytes.Contains(raw, []byte(res.Ref.Digest)) || bytes.Contains(raw, []byte("planted")) {
		t.Fatal("a planted reference or attribute left the processor")
	}
	spans := spansByName(out)
	a := spans["with content"].Attributes()
	if v, _ := spans["no content"].Attributes().Get("git.branch_ref"); v.Str() != "main" {
		t.Error("an ordinary *_ref attribute was removed")
	}
	if got := fetch(t, st, refs(a)); got != canary(1) {
		t.Fatalf("span references: %v", a.AsRaw())
	}
	if v, _ := a.Get(AttrBytes); v.Int() != int64(len(canary(1))+len(`{"content":""}`)+len(canary(2))) {
		t.Errorf("bytes %d: the planted count was kept", v.Int())
	}
	evAttrs := spans["with content"].Events().At(0).Attributes()
	if got := fetch(t, st, refs(evAttrs)); !strings.Contains(got, canary(2)) || evAttrs.Len() != 1 {
		t.Fatalf("event: %v", evAttrs.AsRaw())
	}
	if n := spans["no content"].Attributes().Len() + spans["no content"].Events().At(0).Attributes().Len(); n != 1 {
		t.Fatalf("span without content kept %d planted attributes", n)
	}
	if v, ok := out.ResourceSpans().At(0).Resource().Attributes().Get("docket.tenant"); !ok || v.Str() != "acme" {
		t.Fatal("resource attributes were changed")
	}

	ld := logWith("gen_ai.user.message", nil, nil)
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	lr.Body().SetStr(canary(3))
	want += plant(lr.Attributes().PutStr, victim)
	other := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().AppendEmpty()
	other.Body().SetStr("GET /health 200")
	want += plant(other.Attributes().PutStr, victim)
	lout := hs.consumeLogs(t, ld)
	lraw, _ := (&plog.ProtoMarshaler{}).MarshalLogs(lout)
	if bytes.Contains(lraw, []byte(res.Ref.Digest)) || bytes.Contains(lraw, []byte("planted")) {
		t.Fatal("a planted reference or attribute left the processor on a log record")
	}
	lrs := lout.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	if got := fetch(t, st, refs(lrs.At(0).Attributes())); got != canary(3) {
		t.Fatalf("log record references: %v", lrs.At(0).Attributes().AsRaw())
	}
	if lrs.At(1).Attributes().Len() != 0 || lrs.At(1).Body().Str() != "GET /health 200" {
		t.Fatalf("ordinary log record: %v", lrs.At(1).Attributes().AsRaw())
	}

	var rm metricdata.ResourceMetrics
	if err := hs.reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	var got int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != metricPlanted {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if dp.Attributes.Len() != 1 {
					t.Errorf("labels %v", dp.Attributes)
				}
				got += dp.Value
			}
		}
	}
	if got != want {
		t.Fatalf("%s = %d, want %d", metricPlanted, got, want)
	}
}
