package ledgerexporter

import (
	"context"
	"fmt"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exporterhelper"
	"go.opentelemetry.io/collector/exporter/exporterhelper/xexporterhelper"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	pdatareq "go.opentelemetry.io/collector/pdata/xpdata/request"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/extract"
	"github.com/docketlabs/docket/ledger/ledgerexporter/internal/metadata"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/rowbinary"
)

func testRows(t testing.TB, calls, evidence int, prefix string) *rows {
	t.Helper()
	r := &rows{}
	var seg segment
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for i := range calls {
		c := ledgertest.Call("acme", fmt.Sprintf("%032x", i+1), fmt.Sprintf("%s%015x", prefix, i))
		c.StartTime, c.EndTime, c.IngestedAt = now, now, now
		c.ResponseModel, c.RequestParams = "m", map[string]string{"k": fmt.Sprint(i)}
		var err error
		if seg.calls, err = rowbinary.EncodeCalls(seg.calls, []ledger.Call{c}); err != nil {
			t.Fatal(err)
		}
		seg.ends = append(seg.ends, len(seg.calls))
		seg.keys = append(seg.keys, ledger.CallKey(&c))
	}
	if calls > 0 {
		r.segs = []segment{seg}
	}
	for i := range evidence {
		r.evidence = append(r.evidence, ledger.EvidenceSpan{Tenant: "acme", TraceID: fmt.Sprintf("%032x", i+1),
			SpanID: fmt.Sprintf("%s%015x", prefix, 1000+i), Category: "db", Documents: []ledger.Document{}, AttributeIssues: []string{}})
	}
	return r
}

// flatten lists every row of reqs as (key, encoded bytes), in order.
func flatten(t *testing.T, reqs []xexporterhelper.Request) []string {
	var out []string
	for _, q := range reqs {
		r := q.(*rows)
		for _, seg := range r.segs {
			start := 0
			for i, end := range seg.ends {
				out = append(out, seg.keys[i]+"="+fmt.Sprintf("%x", seg.calls[start:end]))
				start = end
			}
			if start != len(seg.calls) || len(seg.keys) != len(seg.ends) {
				t.Fatalf("inconsistent segment: %d bytes, ends at %d, %d keys", len(seg.calls), start, len(seg.keys))
			}
		}
		for _, e := range r.evidence {
			out = append(out, "evidence "+e.SpanID)
		}
	}
	return out
}

func TestMergeSplitKeepsEveryRowOnce(t *testing.T) {
	a, b := testRows(t, 7, 3, "a"), testRows(t, 5, 4, "b")
	want := append(flatten(t, []xexporterhelper.Request{testRows(t, 7, 0, "a"), testRows(t, 5, 0, "b")}),
		flatten(t, []xexporterhelper.Request{testRows(t, 0, 3, "a"), testRows(t, 0, 4, "b")})...)
	got, err := a.MergeSplit(context.Background(), 4, exporterhelper.RequestSizerTypeItems, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 {
		t.Fatalf("19 items in batches of 4: %d batches", len(got))
	}
	for i, q := range got {
		if n := q.ItemsCount(); n > 4 || (i < len(got)-1 && n != 4) {
			t.Fatalf("batch %d has %d items", i, n)
		}
	}
	if f := flatten(t, got); fmt.Sprint(f) != fmt.Sprint(want) {
		t.Fatalf("rows changed in merge/split:\n got %v\nwant %v", f, want)
	}
	// Bytes: no batch over the limit; a row larger than the limit is an
	// error, not a silent drop.
	one := testRows(t, 10, 0, "c")
	limit := one.segs[0].ends[2] + 1 // about two rows
	byBytes, err := testRows(t, 10, 0, "c").MergeSplit(context.Background(), limit, exporterhelper.RequestSizerTypeBytes, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range byBytes {
		if q.BytesSize() > limit {
			t.Fatalf("batch of %d bytes over the %d limit", q.BytesSize(), limit)
		}
	}
	if fmt.Sprint(flatten(t, byBytes)) != fmt.Sprint(flatten(t, []xexporterhelper.Request{one})) {
		t.Fatal("rows changed in a bytes split")
	}
	if _, err := testRows(t, 1, 0, "d").MergeSplit(context.Background(), 10, exporterhelper.RequestSizerTypeBytes, nil); err == nil {
		t.Fatal("a row over the byte limit was accepted")
	}
	if _, err := testRows(t, 1, 0, "d").MergeSplit(context.Background(), 10, exporterhelper.RequestSizerTypeRequests, nil); err == nil {
		t.Fatal("the requests sizer was accepted")
	}
}

func TestQueueEncodingRoundTrip(t *testing.T) {
	r := testRows(t, 6, 2, "e")
	b, err := rowsEncoding{}.Marshal(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	_, back, err := rowsEncoding{}.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	got := back.(*rows)
	if fmt.Sprint(flatten(t, []xexporterhelper.Request{got})) != fmt.Sprint(flatten(t, []xexporterhelper.Request{r})) ||
		len(got.evidence) != 2 || got.evidence[1].SpanID != r.evidence[1].SpanID {
		t.Fatal("the batch changed through the queue encoding")
	}
	if b[0] != rowsS2 {
		t.Fatalf("batches are written as version %d", b[0])
	}
	for i := range b {
		if _, _, err := (rowsEncoding{}).Unmarshal(b[:i]); err == nil {
			t.Fatalf("a batch cut at byte %d of %d decoded", i, len(b))
		}
	}
	// Version 1, uncompressed, is what the previous release queued.
	body, err := appendBody(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	_, back, err = rowsEncoding{}.Unmarshal(append([]byte{rowsPlain}, body...))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(flatten(t, []xexporterhelper.Request{back})) != fmt.Sprint(flatten(t, []xexporterhelper.Request{r})) {
		t.Fatal("a version 1 batch changed when read")
	}
	if len(b) >= 1+len(body) {
		t.Fatalf("compressed batch of %d bytes for a %d byte body", len(b), len(body))
	}
	// A damaged length must not become an allocation.
	if _, _, err := (rowsEncoding{}).Unmarshal([]byte{rowsS2, 0xff, 0xff, 0xff, 0xff, 0x0f}); err == nil {
		t.Fatal("a 4 GiB length decoded")
	}
}

func FuzzQueueUnmarshal(f *testing.F) {
	b, _ := rowsEncoding{}.Marshal(context.Background(), testRows(f, 2, 1, "f"))
	f.Add(b)
	f.Add([]byte{rowsPlain, 0xff, 0xff, 0xff, 0xff, 0x0f})
	body, _ := appendBody(nil, testRows(f, 2, 1, "f"))
	f.Add(append([]byte{rowsPlain}, body...))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, req, err := rowsEncoding{}.Unmarshal(data)
		if err != nil {
			return
		}
		again, err := rowsEncoding{}.Marshal(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := (rowsEncoding{}).Unmarshal(again); err != nil {
			t.Fatalf("re-encoded batch does not decode: %v", err)
		}
	})
}

// TestQueuedSpansOfEarlierVersionsBecomeRows: a queue written before rows
// were queued holds OTLP spans; they are converted, not dropped.
func TestQueuedSpansOfEarlierVersionsBecomeRows(t *testing.T) {
	td, spans := spantest.Traces(nil)
	span := spantest.Chat(spans, "", "gpt-4o-mini")
	span.SetTraceID(pcommon.TraceID{1})
	span.SetSpanID(pcommon.SpanID{2})
	x := &ledgerExporter{logger: zap.NewNop(), extractor: &extract.Extractor{DefaultTenant: "default"}, linker: newRequestLinker(defaultRequestSpans)}
	var err error
	if x.tel, err = metadata.NewTelemetryBuilder(componenttest.NewNopTelemetrySettings()); err != nil {
		t.Fatal(err)
	}
	enc := rowsEncoding{legacy: x.convertQueued}
	enveloped, err := pdatareq.MarshalTraces(context.Background(), td)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"enveloped": enveloped, "plain": plain} {
		_, req, err := enc.Unmarshal(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		keys := req.(*rows).segs[0].keys
		if len(keys) != 1 || keys[0] != "default\x00"+span.TraceID().String()+"\x00"+span.SpanID().String() {
			t.Fatalf("%s: keys %q", name, keys)
		}
	}
	if _, _, err := enc.Unmarshal([]byte{0x0A, 0xFF}); err == nil {
		t.Fatal("garbage decoded")
	}
}
