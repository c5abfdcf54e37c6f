package views

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/storage"
)

// searchStepwise is Search as it was until it read every reading of q in
// one statement: testdata/search_stepwise.sql once per reading, in Search's
// order, until one finds calls.
func searchStepwise(t *testing.T, q string, from, to time.Time, tenants []string, limit int) (string, []CallSummary) {
	t.Helper()
	sql, err := os.ReadFile("testdata/search_stepwise.sql")
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		kind                            string
		f                               Filter
		traceID, responseID, endUserRef string
	}
	var steps []step
	if id := strings.ToLower(q); ledger.ValidTraceID(id) {
		steps = append(steps, step{kind: KindTraceID, f: Filter{Tenants: tenants}, traceID: id})
	}
	steps = append(steps,
		step{kind: KindResponseID, f: Filter{Tenants: tenants}, responseID: q},
		step{kind: KindEndUser, f: Filter{Tenants: tenants, From: from, To: to}, endUserRef: q})
	for _, s := range steps {
		bound, err := bindSQL("search_stepwise", string(sql), s.f, map[string]any{
			"trace_id": s.traceID, "response_id": s.responseID, "end_user_ref": s.endUserRef, "limit": uint32(limit),
		})
		if err != nil {
			t.Fatal(err)
		}
		calls := []CallSummary{}
		if err = store.Engine().QueryJSON(context.Background(), bound, storage.DecodeRows(&calls)); err != nil {
			t.Fatal(err)
		}
		if len(calls) > 0 {
			return s.kind, calls
		}
	}
	return steps[0].kind, []CallSummary{}
}

// TestSearchFindsWhatTheStepwiseSearchFound compares Search, which reads
// every reading of q in one statement, with the search it replaced, one
// statement per reading, over the curated calls and the end-user index's
// ledger (frequent users with full pages, redeliveries, conflicts): trace
// IDs in one or two tenants and upper case, response IDs in one or two
// tenants, end users, a text that is a response ID and an end user, one
// that is an end user and looks like a trace ID, and unknown ones, under
// several grants, windows and page sizes. Kind and calls must be the same.
func TestSearchFindsWhatTheStepwiseSearchFound(t *testing.T) {
	load(t)
	ctx := context.Background()
	users := indexLedger(t)
	// A text that is a response ID in one trace and the end user of calls
	// in others, in the index ledger's tenants and months.
	both := []ledger.Call{
		call(ledger.Call{Tenant: "zzz-idx-b", TraceID: "b1000000000000000000000000000001", SpanID: "00000000000b0001", ServiceName: "bot",
			StartTime: indexFrom.Add(time.Hour), DurationMS: 10, Provider: "openai", RequestModel: "gpt-4o", ResponseID: "idx-both", Status: "ok"}),
		call(ledger.Call{Tenant: "zzz-idx-c", TraceID: "b1000000000000000000000000000002", SpanID: "00000000000b0002", ServiceName: "bot",
			StartTime: indexFrom.Add(2 * time.Hour), DurationMS: 10, Provider: "openai", RequestModel: "gpt-4o", ResponseID: "idx-r2", Status: "ok", EndUserRef: "idx-both"}),
	}
	if err := store.InsertCalls(ctx, both); err != nil {
		t.Fatal(err)
	}
	qs := []string{traceA, strings.ToUpper(traceA), traceD, "chatcmpl-a1", "resp-shared", "user-1", "user-2", "user-9",
		hashedUser, strings.ToUpper(hashedUser), "recent-user", "idx-both", "idx-r2", "nobody", "b1000000000000000000000000000001"}
	qs = append(qs, users[:5]...)
	qs = append(qs, users[len(users)-2:]...)
	for _, col := range []string{"trace_id", "response_id"} {
		err := store.Engine().QueryJSON(ctx, fmt.Sprintf("SELECT DISTINCT %s AS v FROM llm_calls WHERE tenant LIKE 'zzz-idx-%%' ORDER BY cityHash64(v) LIMIT 4", col),
			func(row []byte) error {
				var r struct {
					V string `json:"v"`
				}
				err := json.Unmarshal(row, &r)
				qs = append(qs, r.V)
				return err
			})
		if err != nil {
			t.Fatal(err)
		}
	}
	grants := [][]string{every, {"acme"}, {"globex", "zzz-idx-a"}, {"zzz-idx-c", "recent"}, {"zzz-idx-b", "zzz-idx-c"}, {}}
	now := time.Now().UTC()
	windows := [][2]time.Time{
		{t0, t0.Add(72 * time.Hour)},
		{indexFrom, indexTo},
		{indexFrom.Add(30 * 24 * time.Hour), indexTo},
		{now.Add(-EndUserWindow), now},
		{minTime, maxTime},
	}
	limits := []int{1, 2, DefaultSearchLimit}
	found := map[string]int{}
	for i, q := range qs {
		for j, g := range grants {
			w, limit := windows[(i+j)%len(windows)], limits[(i+2*j)%len(limits)]
			kind, got, err := Search(ctx, store, q, w[0], w[1], g, limit)
			if err != nil {
				t.Fatal(err)
			}
			wantKind, want := searchStepwise(t, q, w[0], w[1], g, limit)
			if kind != wantKind || !slices.EqualFunc(got, want, equalSummary) {
				t.Errorf("%q, tenants %v, %s – %s, limit %d: got %s %v, the stepwise search %s %v",
					q, g, w[0].Format(time.DateOnly), w[1].Format(time.DateOnly), limit, kind, keysOf(got), wantKind, keysOf(want))
			}
			if len(got) > 0 {
				found[kind]++
			}
		}
	}
	// Every reading found calls somewhere, or the comparison proves little.
	for _, k := range readings {
		if found[k] == 0 {
			t.Errorf("no search found calls as %s", k)
		}
	}
}

// TestEndUserSearchShowsAKeptRowOnce: the end user's calls are read
// without FINAL (through a projection), so a kept row stored twice with the
// same version, as a retried insert leaves it, must still be one call.
func TestEndUserSearchShowsAKeptRowOnce(t *testing.T) {
	load(t)
	ctx := context.Background()
	start := time.Date(2022, 8, 3, 10, 0, 0, 0, time.UTC)
	if err := store.InsertCalls(ctx, []ledger.Call{call(ledger.Call{Tenant: "zzz-dup", TraceID: "d0000000000000000000000000000001", SpanID: "00000000000d0001",
		ServiceName: "bot", StartTime: start, DurationMS: 10, Provider: "openai", RequestModel: "gpt-4o", Status: "ok", EndUserRef: "dup-user"})}); err != nil {
		t.Fatal(err)
	}
	if err := store.Engine().Exec(ctx, "INSERT INTO provider_call_rows SELECT * FROM provider_call_rows WHERE tenant = 'zzz-dup' AND NOT is_deleted"); err != nil {
		t.Fatal(err)
	}
	_, got, err := Search(ctx, store, "dup-user", start.Add(-time.Hour), start.Add(time.Hour), every, DefaultSearchLimit)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("the call stored twice came %d times: %v", len(got), keysOf(got))
	}
}

// TestEndUserSearchLooksPastItsNewestCalls: the search reads a bounded
// number of an end user's newest rows first. When those give a short page
// (here: all of them in a tenant not granted), it must read the older ones
// too rather than show less than there is.
func TestEndUserSearchLooksPastItsNewestCalls(t *testing.T) {
	load(t)
	ctx := context.Background()
	start := time.Date(2022, 9, 5, 0, 0, 0, 0, time.UTC)
	const limit = 2
	var calls []ledger.Call
	newer := userRowsPerCall*limit + 5
	for i := range newer + 3 {
		tenant, at := "zzz-deep-new", start.Add(time.Duration(newer+3-i)*time.Minute)
		if i >= newer {
			tenant = "zzz-deep-old"
		}
		calls = append(calls, call(ledger.Call{Tenant: tenant, TraceID: fmt.Sprintf("e%031x", i), SpanID: fmt.Sprintf("%016x", 0xe000+i),
			ServiceName: "bot", StartTime: at, DurationMS: 10, Provider: "openai", RequestModel: "gpt-4o", Status: "ok", EndUserRef: "deep-user"}))
	}
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	kind, got, err := Search(ctx, store, "deep-user", start, start.Add(24*time.Hour), []string{"zzz-deep-old"}, limit)
	if err != nil {
		t.Fatal(err)
	}
	// The old tenant's two newest calls, newest first.
	want := []string{fmt.Sprintf("e%031x", newer), fmt.Sprintf("e%031x", newer+1)}
	var traces []string
	for _, c := range got {
		traces = append(traces, c.TraceID)
	}
	if kind != KindEndUser || !slices.Equal(traces, want) {
		t.Fatalf("got %s %v, want %s %v", kind, traces, KindEndUser, want)
	}
}

// TestEndUserSearchCutsAtATie: the bounded read of an end user's newest
// rows can end inside a group of rows that start together, leaving out a
// call of the group that the page orders first. Here the user's newest
// rows are deleted calls (a row and a tombstone each) and a call of a
// tenant not granted, and the bound falls between two live calls that
// start together: the one read (written later) orders after the one left
// out. Had the rows of the oldest start time read been kept, the page
// would be full with the wrong call and nothing would be read again.
func TestEndUserSearchCutsAtATie(t *testing.T) {
	load(t)
	ctx := context.Background()
	const limit = 1
	start := time.Date(2022, 10, 3, 12, 0, 0, 0, time.UTC)
	mk := func(tenant string, i int, at time.Time) ledger.Call {
		return call(ledger.Call{Tenant: tenant, TraceID: fmt.Sprintf("c%031x", i), SpanID: fmt.Sprintf("%016x", 0xc000+i),
			ServiceName: "bot", StartTime: at, DurationMS: 10, Provider: "openai", RequestModel: "gpt-4o", Status: "ok", EndUserRef: "tie-user"})
	}
	deleted := (userRowsPerCall*limit - 2) / 2
	var newer []ledger.Call
	for i := range deleted {
		newer = append(newer, mk("zzz-tie", i, start.Add(time.Duration(deleted+1-i)*time.Minute)))
	}
	newer = append(newer, mk("zzz-tie-other", deleted, start.Add(time.Duration(deleted+2)*time.Minute)))
	// first orders before second (trace IDs descending) and is written
	// first, so its row has the older version.
	first, second := mk("zzz-tie", 0xff, start), mk("zzz-tie", 0xfe, start)
	for _, batch := range [][]ledger.Call{append(newer, first), {second}} {
		if err := store.InsertCalls(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	// Deleted as expiry deletes: the ledger's rows, then the kept calls of
	// their traces rewritten (a tombstone each).
	traces := make([]string, deleted)
	for i := range traces {
		traces[i] = newer[i].TraceID
	}
	js, err := json.Marshal(traces)
	if err != nil {
		t.Fatal(err)
	}
	q, err := storage.Bind("DELETE FROM llm_calls WHERE tenant = 'zzz-tie' AND has(JSONExtract({traces:String}, 'Array(String)'), trace_id)", map[string]any{"traces": string(js)})
	if err != nil {
		t.Fatal(err)
	}
	if err = store.Engine().Exec(ctx, q); err != nil {
		t.Fatal(err)
	}
	if err = store.RefreshCalls(ctx, traces); err != nil {
		t.Fatal(err)
	}
	kind, got, err := Search(ctx, store, "tie-user", start.Add(-time.Hour), start.Add(time.Hour), []string{"zzz-tie"}, limit)
	if err != nil {
		t.Fatal(err)
	}
	if kind != KindEndUser || len(got) != 1 || got[0].TraceID != first.TraceID {
		t.Fatalf("got %s %v, want the call %s", kind, keysOf(got), first.TraceID)
	}
}
