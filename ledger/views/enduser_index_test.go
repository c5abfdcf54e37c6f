package views

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// The end-user projection's ledger: its own tenants, named to sort after
// every tenant TestFacets lists, and months (May and June 2022), which no
// other test of the package reads.
var (
	indexTenants = []string{"zzz-idx-a", "zzz-idx-b", "zzz-idx-c"}
	indexFrom    = time.Date(2022, 5, 1, 0, 0, 0, 0, time.UTC)
	indexTo      = time.Date(2022, 7, 1, 0, 0, 0, 0, time.UTC)
)

// indexLedger writes calls of a few end users, some very active, in
// traces of one to three calls over two months (two partitions), in
// several batches (several parts); some batches go in twice, as an
// at-least-once queue delivers them, and some keys come again with other
// content (conflicts, one of them naming another end user). It returns
// the end users, the most active first.
func indexLedger(t *testing.T) (users []string) {
	t.Helper()
	r := rand.New(rand.NewPCG(13, 17))
	zipf := rand.NewZipf(r, 1.3, 1, 39)
	services := []string{"chat-api", "bot", "summarizer"}
	models := []string{"gpt-4o", "gpt-4o-mini", "claude-3-5-haiku"}
	statuses := []string{ledger.StatusOK, ledger.StatusError, "unset"}
	span := 0
	var batches [][]ledger.Call
	for b := 0; b < 8; b++ {
		var batch []ledger.Call
		for range 150 {
			tenant := indexTenants[r.IntN(len(indexTenants))]
			user := fmt.Sprintf("idx-user-%d", zipf.Uint64())
			if r.IntN(10) == 0 {
				user = ""
			}
			trace := fmt.Sprintf("%032x", r.Uint64())
			start := indexFrom.Add(time.Duration(r.Int64N(int64(indexTo.Sub(indexFrom)))))
			for range 1 + r.IntN(3) {
				span++
				model := models[r.IntN(len(models))]
				batch = append(batch, call(ledger.Call{Tenant: tenant, TraceID: trace, SpanID: fmt.Sprintf("%016x", span),
					ServiceName: services[r.IntN(len(services))], StartTime: start, DurationMS: 100, Provider: "openai",
					RequestModel: model, ResponseModel: model + "-1", ResponseID: fmt.Sprintf("idx-resp-%d", span),
					Status: statuses[r.IntN(len(statuses))], EndUserRef: user}))
				// Calls of one trace share start times now and then.
				start = start.Add(time.Duration(r.IntN(2)) * time.Second)
			}
		}
		batches = append(batches, batch)
	}
	// Redeliveries, and conflicts: the first batch's keys again with other
	// content, every fifth one under another end user.
	conflicts := slices.Clone(batches[0][:40])
	for i := range conflicts {
		conflicts[i].DurationMS++
		if i%5 == 0 {
			conflicts[i].EndUserRef = "idx-user-conflict"
		}
	}
	batches = append(batches, batches[2], batches[5][:60], conflicts)
	ctx := context.Background()
	calls := map[string]int{}
	for _, batch := range batches {
		if err := store.InsertCalls(ctx, batch); err != nil {
			t.Fatal(err)
		}
		for _, c := range batch {
			if c.EndUserRef != "" {
				calls[c.EndUserRef]++
			}
		}
	}
	for u := range calls {
		users = append(users, u)
	}
	slices.SortFunc(users, func(a, b string) int { return cmp.Or(calls[b]-calls[a], strings.Compare(a, b)) })
	return users
}

// TestEndUserProjectionFindsWhatTheTableFinds compares the end-user search
// through the projection of migration 0017 with the same query reading the
// table without it, for every end user under many filters: after inserts,
// after the migration's fill of existing parts, after merges and after
// expiry rewrote the kept calls. A projection missing or keeping a row
// changes the page, so the results differ.
func TestEndUserProjectionFindsWhatTheTableFinds(t *testing.T) {
	load(t)
	ctx := context.Background()
	users := indexLedger(t)
	if len(users) < 20 {
		t.Fatalf("only %d end users", len(users))
	}
	// The most active users, whose pages are full, a few others, and the
	// one a conflicting row names: every query is a few engine reads, and
	// the machine running the tests may be a slow one.
	users = append(users[:4], users[len(users)-2:]...)
	users = append(users, "idx-user-conflict")
	mid := indexFrom.Add(indexTo.Sub(indexFrom) / 2)
	filters := []struct {
		name string
		f    Filter
	}{
		{"every tenant", Filter{Tenants: every, From: indexFrom, To: indexTo}},
		{"granted tenants", Filter{Tenants: []string{"zzz-idx-a", "zzz-idx-c"}, From: indexFrom, To: indexTo}},
		{"one tenant", Filter{Tenants: every, Tenant: "zzz-idx-b", From: indexFrom, To: indexTo}},
		{"service", Filter{Tenants: every, Service: "bot", From: indexFrom, To: indexTo}},
		{"model", Filter{Tenants: every, Model: "gpt-4o-mini-1", From: indexFrom, To: indexTo}},
		{"request model", Filter{Tenants: every, Model: "gpt-4o", From: indexFrom, To: indexTo}},
		{"status", Filter{Tenants: every, Status: ledger.StatusError, From: indexFrom, To: indexTo}},
		{"second half", Filter{Tenants: every, From: mid, To: indexTo}},
		{"a day", Filter{Tenants: every, From: mid, To: mid.Add(24 * time.Hour)}},
		// What expiry removes at the end.
		{"expired", Filter{Tenants: every, Tenant: "zzz-idx-a", From: indexFrom, To: mid}},
	}
	compare := func(stage string) {
		t.Helper()
		usedProjection := false
		for i, u := range users {
			for j, fc := range filters {
				// A short page, where a trace missing from the projection
				// or kept in it lets another one in, and a full one.
				for _, limit := range []int{[]int{2, DefaultSearchLimit}[(i+j)%2]} {
					s := search{q: u, userFrom: fc.f.From, userTo: fc.f.To}
					_, got, err := searchCalls(ctx, store, fc.f, s, limit)
					if err != nil {
						t.Fatal(err)
					}
					want := searchWithoutProjection(t, fc.f, s, limit)
					if !slices.EqualFunc(got, want, equalSummary) {
						t.Errorf("%s: %s, %s, limit %d: through the projection %d calls %v, through the table %d %v",
							stage, u, fc.name, limit, len(got), keysOf(got), len(want), keysOf(want))
					}
				}
			}
		}
		for _, u := range users[:3] {
			usedProjection = usedProjection || endUserPlanUses(t, u, "by_end_user")
		}
		if !usedProjection {
			t.Errorf("%s: the end-user search does not read the projection", stage)
		}
	}
	compare("after inserts")

	// The migration's fill: parts without the projection get it from the
	// background mutation, and the search reads them as before meanwhile.
	if err := store.Engine().Exec(ctx, "ALTER TABLE provider_call_rows CLEAR PROJECTION by_end_user SETTINGS mutations_sync = 1"); err != nil {
		t.Fatal(err)
	}
	runMigration(t, 17)
	waitForMutations(t, "provider_call_rows")
	compare("after the fill")

	if err := store.Engine().Exec(ctx, "OPTIMIZE TABLE provider_call_rows PARTITION 202205 FINAL"); err != nil {
		t.Fatal(err)
	}
	compare("after a merge")

	// Expiry's lightweight DELETE, of one tenant's calls before mid.
	before := countCalls(t, "zzz-idx-a")
	keys, err := storage.QueryRows[struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	}](ctx, store.Engine(), queries.MustGet("lifecycle_expiring_call_keys"), map[string]any{"tenant": "zzz-idx-a", "cutoff": mid})
	if err != nil {
		t.Fatal(err)
	}
	list := make([][2]string, len(keys))
	for i, k := range keys {
		list[i] = [2]string{k.TraceID, k.SpanID}
	}
	js, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	q, err := storage.Bind(queries.MustGet("lifecycle_expire_calls"), map[string]any{"tenant": "zzz-idx-a", "keys": string(js), "users": "[]"})
	if err != nil {
		t.Fatal(err)
	}
	if err = store.Engine().Exec(ctx, q); err != nil {
		t.Fatal(err)
	}
	// As expiry does, so the kept calls follow the ledger.
	if err = store.RefreshCallsBefore(ctx, "zzz-idx-a", mid); err != nil {
		t.Fatal(err)
	}
	if after := countCalls(t, "zzz-idx-a"); after == 0 || after >= before {
		t.Fatalf("expiry left %d of %d rows", after, before)
	}
	compare("after expiry")
}

// searchWithoutProjection is searchCalls with the engine told not to use
// projections: the search as it read before migration 0013.
func searchWithoutProjection(t *testing.T, f Filter, s search, limit int) []CallSummary {
	t.Helper()
	q, err := bind("views_search", f, searchParams(s, limit))
	if err != nil {
		t.Fatal(err)
	}
	calls := []CallSummary{}
	if err = store.Engine().QueryJSON(context.Background(), q+",\n    optimize_use_projections = 0", storage.DecodeRows(&calls)); err != nil {
		t.Fatal(err)
	}
	return calls
}

// endUserPlanUses reports whether the engine plans the search's read of an
// end user's calls (the innermost query of views_search.sql's end-user
// reading, over every tenant of indexLedger) through the named projection.
func endUserPlanUses(t *testing.T, user, projection string) bool {
	t.Helper()
	f := Filter{Tenants: every, From: indexFrom, To: indexTo}
	q, err := bind("views_search", f, searchParams(search{q: user, userFrom: f.From, userTo: f.To}, 1))
	if err != nil {
		t.Fatal(err)
	}
	// The read alone, as the engine plans it on its own.
	start, end := strings.Index(q, "SELECT\n                    tenant"), strings.Index(q, "ORDER BY start_time DESC, version DESC\n")
	if start < 0 || end < start {
		t.Fatalf("views_search.sql no longer reads an end user's calls in one subquery:\n%s", q)
	}
	var plan strings.Builder
	err = store.Engine().QueryJSON(context.Background(), "SELECT explain FROM (EXPLAIN projections = 1 "+q[start:end]+")", func(row []byte) error {
		plan.Write(row)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(plan.String(), projection)
}

func runMigration(t *testing.T, version uint32) {
	t.Helper()
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m queries.Migration) bool { return m.Version == version })
	if i < 0 {
		t.Fatalf("no migration %d", version)
	}
	for j, stmt := range ms[i].Statements {
		if err := store.Engine().Exec(context.Background(), stmt.SQL); err != nil {
			t.Fatalf("migration %d statement %d again: %v", version, j+1, err)
		}
	}
}

// waitForMutations waits until table has no mutation left to run.
func waitForMutations(t *testing.T, table string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var r struct {
			Pending int `json:"pending"`
		}
		q, err := storage.Bind("SELECT count() AS pending FROM system.mutations WHERE database = currentDatabase() AND table = {table:String} AND NOT is_done",
			map[string]any{"table": table})
		if err != nil {
			t.Fatal(err)
		}
		err = store.Engine().QueryJSON(context.Background(), q, func(row []byte) error { return json.Unmarshal(row, &r) })
		if err != nil {
			t.Fatal(err)
		}
		if r.Pending == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d mutations of %s still running after a minute", r.Pending, table)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func countCalls(t *testing.T, tenant string) int {
	t.Helper()
	var r struct {
		N int `json:"n"`
	}
	q, err := storage.Bind("SELECT count() AS n FROM llm_calls WHERE tenant = {tenant:String}", map[string]any{"tenant": tenant})
	if err != nil {
		t.Fatal(err)
	}
	if err = store.Engine().QueryJSON(context.Background(), q, func(row []byte) error { return json.Unmarshal(row, &r) }); err != nil {
		t.Fatal(err)
	}
	return r.N
}

func keysOf(calls []CallSummary) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Tenant+"/"+c.TraceID[:6]+"/"+c.SpanID[12:])
	}
	return out
}
