package extract

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
)

// familyFixture is a recorded trace of one instrumentation family, written
// from the keys its documentation or source names (Provenance), and the
// provider calls the ledger must show for it.
type familyFixture struct {
	Family     string `json:"family"`
	Provenance string `json:"provenance"`
	// Batches are delivered one after another, each as its own export
	// request (a call's spans often arrive in different ones).
	Batches [][]fixtureSpan `json:"batches"`
	// Calls are the ledger's rows for the trace, by span ID of the row;
	// fields not given are not checked.
	Calls []map[string]any `json:"calls"`
}

type fixtureSpan struct {
	Scope      string         `json:"scope"`
	Name       string         `json:"name"`
	SpanID     string         `json:"span_id"`
	Parent     string         `json:"parent"`
	StartMS    int64          `json:"start_ms"`
	EndMS      int64          `json:"end_ms"`
	Attributes map[string]any `json:"attributes"`
}

// TestFamilyFixtures: for every family, each provider call is exactly one
// ledger row with the right fields and cost, whatever the order and the
// batches its spans arrive in.
func TestFamilyFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/families/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	x := testExtractor(t)
	for n, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".json"), func(t *testing.T) {
			fx := loadFixture(t, file)
			traceID := pcommon.TraceID{0xfa, byte(n), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
			t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
			for _, batch := range fx.Batches {
				var calls []ledger.Call
				for _, fs := range batch {
					res, span := fixtureToSpan(t, fs, traceID, t0)
					c, _, kind := x.Extract(res, fs.Scope, span, t0)
					if kind == KindCall {
						calls = append(calls, c)
					}
				}
				if len(calls) > 0 {
					if err := testStore.InsertCalls(context.Background(), calls); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := testStore.CallsByTrace(context.Background(), traceID.String())
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(fx.Calls) {
				t.Fatalf("%d rows, want %d: %+v", len(got), len(fx.Calls), got)
			}
			for i, want := range fx.Calls {
				row := callFields(t, got[i])
				for k, w := range want {
					if g := row[k]; !reflect.DeepEqual(g, normalizeJSON(t, w)) {
						t.Errorf("call %d (span %v): %s = %v, want %v", i, row["span_id"], k, g, w)
					}
				}
			}
		})
	}
}

func loadFixture(t *testing.T, file string) familyFixture {
	t.Helper()
	var fx familyFixture
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&fx); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if fx.Provenance == "" || fx.Family == "" {
		t.Fatalf("%s: a fixture names its family and the source of its keys", file)
	}
	return fx
}

// TestEveryFamilyHasAFixture: a family of the contract is one table entry
// plus its fixture, and the fixture holds a call span the contract reads
// as that family; a family without one is untested.
func TestEveryFamilyHasAFixture(t *testing.T) {
	files, err := filepath.Glob("testdata/families/*.json")
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string][]string{}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, file := range files {
		for _, batch := range loadFixture(t, file).Batches {
			for _, fs := range batch {
				_, span := fixtureToSpan(t, fs, pcommon.TraceID{1}, t0)
				r := conventions.Read(fs.Scope, span.Attributes())
				if role, _ := r.Classify(span.Name()); role == conventions.RoleCall {
					covered[r.Family().Name] = append(covered[r.Family().Name], filepath.Base(file))
				}
			}
		}
	}
	for _, f := range append(slices.Clone(conventions.Families), conventions.GenAI) {
		if len(covered[f.Name]) == 0 {
			t.Errorf("family %s (%s) has no fixture with a call span read as it in testdata/families", f.Name, f.Source)
		}
	}
}

func fixtureToSpan(t *testing.T, fs fixtureSpan, traceID pcommon.TraceID, t0 time.Time) (pcommon.Resource, ptrace.Span) {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.ServiceName, "fixture")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName(fs.Scope)
	span := ss.Spans().AppendEmpty()
	span.SetName(fs.Name)
	span.SetTraceID(traceID)
	span.SetSpanID(spanID(t, fs.SpanID))
	if fs.Parent != "" {
		span.SetParentSpanID(spanID(t, fs.Parent))
	}
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(fs.StartMS) * time.Millisecond)))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(t0.Add(time.Duration(fs.EndMS) * time.Millisecond)))
	raw := map[string]any{}
	for k, v := range fs.Attributes {
		raw[k] = fromJSONNumber(v)
	}
	if err := span.Attributes().FromRaw(raw); err != nil {
		t.Fatal(err)
	}
	return rs.Resource(), span
}

// fromJSONNumber makes JSON integers int64 attributes and other numbers
// doubles, as SDKs send them.
func fromJSONNumber(v any) any {
	switch t := v.(type) {
	case json.Number:
		if n, err := t.Int64(); err == nil {
			return n
		}
		f, _ := t.Float64()
		return f
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = fromJSONNumber(e)
		}
		return out
	}
	return v
}

func spanID(t *testing.T, s string) pcommon.SpanID {
	var id pcommon.SpanID
	b, err := hex.DecodeString(s)
	if err != nil || len(b) > 8 {
		t.Fatalf("span id %q", s)
	}
	copy(id[8-len(b):], b)
	return id
}

// callFields is a row as JSON values, as the exports show it.
func callFields(t *testing.T, c ledger.Call) map[string]any {
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["span_id"] = strings.TrimLeft(c.SpanID, "0")
	m["evidence_span_ids"] = trimIDs(c.EvidenceSpanIDs)
	return m
}

func trimIDs(ids []string) []any {
	out := []any{}
	for _, id := range slices.Sorted(slices.Values(ids)) {
		out = append(out, strings.TrimLeft(id, "0"))
	}
	return out
}

func normalizeJSON(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
