package ledgerstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/queries"
)

// The provider_calls of migration 0014 merges spans into calls exactly as
// 0010's did: both views over the same random traces (spans whose parents
// and grandparents are or are not in the trace, a few sharing response
// IDs, usage and content on some) give the same rows.
func TestProviderCallsJoinsMatchTheArrays(t *testing.T) {
	ctx := context.Background()
	old := viewOf(t, 10, "provider_calls_0010")
	if err := testStore.eng.Exec(ctx, old); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testStore.eng.Exec(ctx, "DROP VIEW IF EXISTS provider_calls_0010") })

	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Now().UTC().Truncate(time.Millisecond)
	var calls []ledger.Call
	var traces []string
	for tr := range 60 {
		trace := fmt.Sprintf("%032x", rng.Uint64())
		traces = append(traces, trace)
		n := 1 + rng.IntN(12)
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("%016x", rng.Uint64())
		}
		for i := range n {
			c := refreshCall(trace)
			c.Tenant = fmt.Sprintf("t%d", tr%2)
			c.SpanID = ids[i]
			c.StartTime = base.Add(time.Duration(rng.IntN(5)) * time.Millisecond)
			switch r := rng.IntN(4); {
			case r == 0 || i == 0:
				c.ParentSpanID = fmt.Sprintf("%016x", rng.Uint64()) // outside the trace's calls
			default:
				c.ParentSpanID = ids[rng.IntN(i)]
			}
			if rng.IntN(4) == 0 {
				c.ResponseID = fmt.Sprintf("resp-%d", rng.IntN(3))
			}
			if rng.IntN(2) == 0 {
				c.UsageSource, c.InputTokens = "reported", new(int64(rng.IntN(100)))
			}
			if rng.IntN(3) == 0 {
				c.ContentStatus, c.InputRef = "stored", fmt.Sprintf("ref-%d", rng.Uint64())
			}
			c.ServiceName = fmt.Sprintf("svc-%d", i)
			calls = append(calls, c)
		}
	}
	if err := testStore.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	list := strings.Join(traces, "\n")
	read := func(view string) []string {
		var rows []string
		q := "SELECT * FROM " + view + "(tenant = '', traces = '" + list + "', from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59') ORDER BY tenant, trace_id, span_id"
		if err := testStore.eng.QueryJSON(ctx, q, func(row []byte) error { rows = append(rows, string(row)); return nil }); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	got, want := read("provider_calls"), read("provider_calls_0010")
	if len(want) >= len(calls) || len(want) < len(traces) {
		t.Fatalf("%d calls of %d spans in %d traces: the traces do not exercise merging", len(want), len(calls), len(traces))
	}
	if !slices.Equal(got, want) {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("row %d:\n got %s\nwant %s", i, got[i], want[i])
			}
		}
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
}

// A trace of many spans is merged in memory linear in its spans: 0010's
// view copied the trace's span IDs onto each of its rows, so 20,000 spans
// needed gigabytes (and every write to the trace merged it again).
func TestProviderCallsOfALongTraceStayBounded(t *testing.T) {
	ctx := context.Background()
	trace := fmt.Sprintf("%032x", rand.Uint64())
	calls := make([]ledger.Call, 20000)
	for i := range calls {
		calls[i] = refreshCall(trace)
		calls[i].SpanID = fmt.Sprintf("%016x", i+1)
		calls[i].ParentSpanID = fmt.Sprintf("%016x", i) // a chain: each span the child of the one before
	}
	if err := testStore.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	var n struct {
		Calls uint64 `json:"calls"`
	}
	q := "SELECT count() AS calls FROM provider_calls(tenant = '', traces = '" + trace + "', from = '1900-01-01 00:00:00', to = '2261-12-31 23:59:59') SETTINGS max_memory_usage = 300000000"
	if err := testStore.eng.QueryJSON(ctx, q, func(row []byte) error { return json.Unmarshal(row, &n) }); err != nil {
		t.Fatalf("merging a trace of %d spans within 300 MB: %v", len(calls), err)
	}
	// A span's call is keyed by its grandparent: the first three spans of
	// the chain are one call, every later span's key is another span's.
	if want := uint64(len(calls) - 2); n.Calls != want {
		t.Fatalf("%d calls, want %d", n.Calls, want)
	}
}

// viewOf returns migration version's CREATE statement of the view
// provider_calls, creating name instead.
func viewOf(t *testing.T, version uint32, name string) string {
	t.Helper()
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version != version {
			continue
		}
		for _, st := range m.Statements {
			if rest, ok := strings.CutPrefix(st.SQL[strings.Index(st.SQL, "CREATE"):], "CREATE OR REPLACE VIEW provider_calls AS"); ok {
				return "CREATE OR REPLACE VIEW " + name + " AS" + rest
			}
		}
	}
	t.Fatalf("migration %d has no provider_calls", version)
	return ""
}
