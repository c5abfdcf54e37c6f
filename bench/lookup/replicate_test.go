package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/views"
	"github.com/docketlabs/docket/ui/apiclient"
)

// copies is how many times TestReplicate grows its ledger.
const copies = 3

// idKeys are the JSON keys whose values are a copy's own: identifiers and
// lists of them. Everything else reads the same in every copy.
var idKeys = map[string]bool{
	"trace_id": true, "span_id": true, "parent_span_id": true, "response_id": true, "end_user_ref": true,
	"input_ref": true, "output_ref": true, "system_instructions_ref": true, "tool_definitions_ref": true,
	"evidence_span_ids": true, "member_refs": true, "content_refs": true, "ref": true,
}

// TestReplicate grows a ledger written through the write path to three
// times its size and reads every copy of its traces through the product's
// read paths (the complaint lookup, the evidence API, the search by
// response ID and by end user, conflicts, log references): each copy must
// answer as the original does, under its own identifiers. The ledger views
// over the month must count three times the calls, tokens and cost, and
// every table holding rows of calls three times the rows, so no table the
// write path fills is left out of the copies. Finally the copies' kept
// calls are merged again by the write path's own rewrite
// (RefreshCalls): nothing a reader sees may change.
func TestReplicate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	eng := ledgertest.Engine(t)
	store := ledgerstore.New(eng)
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	g, err := newGenerator(7, 400, now.Add(-30*24*time.Hour), now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err = generate(ctx, store, g, 400, 150); err != nil {
		t.Fatal(err)
	}
	linked := writeLinkedCall(t, store, now.Add(-2*time.Hour))

	before := tableCounts(t, eng)
	client, stop, err := evidenceAPI(ctx, store, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	traces := tracesOf(t, eng)
	if len(traces) > 60 {
		traces = append(traces[:59], traceKey{Tenant: linked.Tenant, TraceID: linked.TraceID})
	}
	month := views.Filter{Tenants: []string{views.AllTenants}, From: now.Add(-31 * 24 * time.Hour), To: now}
	originals := make([][]string, len(traces))
	for i, tr := range traces {
		originals[i] = answers(t, store, client, tr, now, identity)
	}
	costs, err := views.Costs(ctx, store, month, views.GroupModel)
	if err != nil {
		t.Fatal(err)
	}

	if err = replicate(ctx, eng, copies); err != nil {
		t.Fatal(err)
	}

	after := tableCounts(t, eng)
	copied := map[string]bool{"row_versions": true}
	for _, r := range replicateTables {
		copied[r.table] = true
	}
	for table, n := range before {
		switch {
		case copied[table] && (n == 0 || after[table] != copies*n):
			t.Errorf("%s: %d rows, then %d after replicating ×%d", table, n, after[table], copies)
		case !copied[table] && n > 0 && table != "schema_migrations":
			t.Errorf("%s holds %d rows of the generated ledger but is not copied", table, n)
		}
	}

	if err = eng.Exec(ctx, replicateFunction); err != nil {
		t.Fatal(err)
	}
	ids := &copyIDs{eng: eng, known: map[string]string{}}
	var copyTraces []string
	for c := 1; c < copies; c++ {
		for i, tr := range traces {
			m := func(id string) string { return ids.get(t, id, c) }
			want := make([]string, len(originals[i]))
			for j, a := range originals[i] {
				want[j] = remapJSON(t, a, m)
			}
			got := answers(t, store, client, tr, now, m)
			if len(got) != len(want) {
				t.Fatalf("trace %s, copy %d: %d answers, want %d", tr.TraceID, c, len(got), len(want))
			}
			for j := range want {
				if got[j] = remapJSON(t, got[j], identity); got[j] != want[j] {
					t.Errorf("trace %s, copy %d, answer %d:\n got %s\nwant %s", tr.TraceID, c, j, got[j], want[j])
				}
			}
			copyTraces = append(copyTraces, m(tr.TraceID))
		}
	}
	if err = eng.Exec(ctx, replicateDropFunction); err != nil {
		t.Fatal(err)
	}

	tripled, err := views.Costs(ctx, store, month, views.GroupModel)
	if err != nil {
		t.Fatal(err)
	}
	if len(tripled.Rows) != len(costs.Rows) {
		t.Fatalf("costs by model: %d models, then %d", len(costs.Rows), len(tripled.Rows))
	}
	for i, r := range costs.Rows {
		checkTripled(t, r.Key, r.CostTotals, tripled.Rows[i].CostTotals)
	}

	// The kept calls of the copies, rewritten from their rows by the write
	// path, read as they did.
	snapshot := func() []string {
		var out []string
		for _, tr := range copyTraces {
			calls, err := store.CallsByTrace(ctx, tr)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, mustJSON(t, calls))
		}
		return out
	}
	copiedKept := snapshot()
	if err = store.RefreshCalls(ctx, copyTraces); err != nil {
		t.Fatal(err)
	}
	if rewritten := snapshot(); !slices.Equal(copiedKept, rewritten) {
		t.Error("the copies' kept calls changed when the write path merged them again")
	}
}

func identity(id string) string { return id }

// answers reads one trace of the ledger through every read path that looks
// up one complaint, with the trace's identifiers mapped by m, as JSON.
func answers(t *testing.T, store *ledgerstore.Store, client *apiclient.Client, tr traceKey, now time.Time, m func(string) string) []string {
	t.Helper()
	ctx := context.Background()
	traceID := m(tr.TraceID)
	calls, err := store.CallsByTrace(ctx, traceID)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 {
		t.Fatalf("trace %s (%s) has no calls", traceID, tr.TraceID)
	}
	spans, err := store.EvidenceByTrace(ctx, traceID)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := store.LogRefsByTrace(ctx, tr.Tenant, traceID)
	if err != nil {
		t.Fatal(err)
	}
	conflicts, err := store.ConflictsByTrace(ctx, traceID)
	if err != nil {
		t.Fatal(err)
	}
	var evidence json.RawMessage
	if err = client.Get(ctx, "/api/v1/evidence/"+traceID, &evidence); err != nil {
		t.Fatal(err)
	}
	// Each answer is its kind (a search's, or none) and its JSON, apart.
	out := []string{"\n" + mustJSON(t, calls), "\n" + mustJSON(t, spans), "\n" + mustJSON(t, refs), "\n" + mustJSON(t, conflicts), "\n" + string(evidence)}
	// The calls are read back unmapped from the copy: search by its own
	// identifiers, as a complaint would name them.
	for _, c := range calls {
		for _, q := range []string{c.ResponseID, c.EndUserRef} {
			if q == "" {
				continue
			}
			kind, res, err := views.Search(ctx, store, q, now.Add(-31*24*time.Hour), now, []string{views.AllTenants}, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) == 0 {
				t.Fatalf("search for %q found nothing", q)
			}
			out = append(out, kind+"\n"+mustJSON(t, res))
		}
	}
	return out
}

// writeLinkedCall writes, through the write path, what the generator does
// not: one call described by two spans (the outer one and its child), an
// evidence span carrying a content reference, and a log record's content
// reference on the child span.
func writeLinkedCall(t *testing.T, store *ledgerstore.Store, at time.Time) ledger.Call {
	t.Helper()
	ctx := context.Background()
	traceID, outer, inner, tool := ledgertest.TraceID(t), ledgertest.SpanID(t), ledgertest.SpanID(t), ledgertest.SpanID(t)
	ref := func(kind string) string {
		return "docket-content://acme/" + kind + "/" + ledgertest.TraceID(t) + ledgertest.TraceID(t)
	}
	a := ledgertest.Call("acme", traceID, outer)
	a.StartTime, a.EndTime, a.IngestedAt = at, at.Add(2*time.Second), at
	a.Provider, a.RequestModel, a.ResponseID, a.EndUserRef = "openai", "gpt-4o", "chatcmpl-linkedLinkedLinked0123456789ab", "u_0123456789abcdef"
	a.InputRef, a.OutputRef, a.ContentStatus = ref("input"), ref("output"), "stored"
	b := a
	b.SpanID, b.ParentSpanID, b.StartTime = inner, outer, at.Add(100*time.Millisecond)
	b.InputRef, b.OutputRef, b.SystemInstructionsRef = "", "", ref("system")
	in, out := int64(120), int64(30)
	b.InputTokens, b.OutputTokens, b.UsageSource = &in, &out, "reported"
	if err := store.InsertCalls(ctx, []ledger.Call{a, b}); err != nil {
		t.Fatal(err)
	}
	e := ledgertest.Evidence("acme", traceID, tool, "tool")
	e.ParentSpanID, e.StartTime, e.EndTime, e.IngestedAt = outer, at.Add(time.Second), at.Add(time.Second), at
	e.ContentRefs = []string{ref("tool-args"), ref("tool-result")}
	if err := store.InsertEvidence(ctx, []ledger.EvidenceSpan{e}); err != nil {
		t.Fatal(err)
	}
	if err := store.InsertLogRefs(ctx, []ledger.LogContentRef{{Tenant: "acme", TraceID: traceID, SpanID: inner,
		Ref: ref("input"), EventName: "gen_ai.user.message", Time: at, IngestedAt: at}}); err != nil {
		t.Fatal(err)
	}
	return a
}

func tracesOf(t *testing.T, eng storage.Engine) []traceKey {
	t.Helper()
	var out []traceKey
	err := eng.QueryJSON(context.Background(), "SELECT DISTINCT tenant, trace_id FROM llm_calls ORDER BY tenant, trace_id", func(row []byte) error {
		var k traceKey
		err := json.Unmarshal(row, &k)
		out = append(out, k)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func tableCounts(t *testing.T, eng storage.Engine) map[string]int {
	t.Helper()
	ctx := context.Background()
	list, err := os.ReadFile("testdata/table_counts.sql")
	if err != nil {
		t.Fatal(err)
	}
	type table struct {
		Table     string `json:"table"`
		Replacing bool   `json:"replacing"`
	}
	var tables []table
	if err = eng.QueryJSON(ctx, string(list), storage.DecodeRows(&tables)); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, tb := range tables {
		q := "SELECT toInt64(count()) AS n FROM `" + tb.Table + "`"
		if tb.Replacing {
			q += " FINAL"
		}
		var r struct{ N int }
		if err = eng.QueryJSON(ctx, q, func(row []byte) error { return json.Unmarshal(row, &r) }); err != nil {
			t.Fatal(err)
		}
		counts[tb.Table] = r.N
	}
	return counts
}

// copyIDs asks the engine for copies' identifiers, by the function the
// copies were made with.
type copyIDs struct {
	eng   storage.Engine
	known map[string]string
}

func (c *copyIDs) get(t *testing.T, id string, n int) string {
	t.Helper()
	key := fmt.Sprint(n, "/", id)
	if v, ok := c.known[key]; ok {
		return v
	}
	sql, err := os.ReadFile("testdata/copy_id.sql")
	if err != nil {
		t.Fatal(err)
	}
	q, err := storage.Bind(string(sql), map[string]any{"id": id, "copy": n})
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ V string }
	if err = c.eng.QueryJSON(context.Background(), q, func(row []byte) error { return json.Unmarshal(row, &r) }); err != nil {
		t.Fatal(err)
	}
	if id != "" && (r.V == id || len(r.V) != len(id)) {
		t.Fatalf("copy %d of %q is %q", n, id, r.V)
	}
	c.known[key] = r.V
	return r.V
}

// remapJSON maps the identifiers in an answer (the values of idKeys) by m
// and sorts every list of identifiers, as the ledger keeps them sorted.
func remapJSON(t *testing.T, answer string, m func(string) string) string {
	t.Helper()
	kind, body, _ := strings.Cut(answer, "\n")
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	return kind + "\n" + mustJSON(t, walk(v, false, m))
}

func walk(v any, isID bool, m func(string) string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = walk(e, idKeys[k], m)
		}
	case []any:
		for i, e := range x {
			x[i] = walk(e, isID, m)
		}
		if isID {
			slices.SortFunc(x, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		}
	case string:
		if isID {
			return m(x)
		}
	}
	return v
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkTripled(t *testing.T, key string, once, thrice views.CostTotals) {
	t.Helper()
	times := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p * copies
	}
	deref := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	if thrice.Calls != copies*once.Calls || thrice.CostUnknownCalls != copies*once.CostUnknownCalls ||
		!reflect.DeepEqual(deref(thrice.InputTokens), times(once.InputTokens)) || !reflect.DeepEqual(deref(thrice.OutputTokens), times(once.OutputTokens)) {
		t.Errorf("%s: %+v, then %+v", key, once, thrice)
	}
	if (once.CostUSD == nil) != (thrice.CostUSD == nil) {
		t.Fatalf("%s: cost %v, then %v", key, once.CostUSD, thrice.CostUSD)
	}
	if once.CostUSD != nil {
		a, okA := new(big.Rat).SetString(*once.CostUSD)
		b, okB := new(big.Rat).SetString(*thrice.CostUSD)
		if !okA || !okB || a.Mul(a, big.NewRat(copies, 1)).Cmp(b) != 0 {
			t.Errorf("%s: cost %s, then %s", key, *once.CostUSD, *thrice.CostUSD)
		}
	}
}
