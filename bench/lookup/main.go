// Command lookup measures the complaint lookup on a ledger of realistic size,
// against the engine's own primary-key point lookup measured in the same
// run, because absolute times on shared machines are not stable:
//
//   - (a) the complaint lookup: every call and evidence span of one trace
//     (Store.CallsByTrace + Store.EvidenceByTrace), what the evidence page
//     reads;
//   - (b) views.Search by a provider response ID;
//   - (c) views.Search by an end-user reference over the last 30 days;
//   - (d) the evidence API as the complaint page calls it: GET
//     /api/v1/evidence/{trace_id} over loopback HTTP, with an admin's API token, with the
//     access-log record of the view, the lifecycle state and the replays;
//   - baseline: SELECT count() … WHERE tenant = … AND trace_id = …, a
//     primary-key prefix lookup without FINAL.
//
// It also times the UI's ledger views over the last 30 days of every tenant
// (first page of the list, costs, time series, latency, facets), which read
// the whole range rather than one key.
//
// Run: go run ./bench/lookup (-calls 1000000 -lookups 500 -data DIR). For
// ledgers larger than the write path can fill in reasonable time,
// -replicate N generates -calls calls and then copies them inside the
// engine to N times as many, each copy under its own keys (replicate.go).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/docketlabs/docket/bench/lookup/timing"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/storage/chdb"
	"github.com/docketlabs/docket/ledger/views"
	"github.com/docketlabs/docket/queries"
	"github.com/docketlabs/docket/ui/apiclient"
)

// The complaint lookup's target and aim.
const (
	target = 60 * time.Second
	aim    = 50 * time.Millisecond
)

func main() {
	calls := flag.Int("calls", 1000000, "LLM calls in the generated ledger")
	lookups := flag.Int("lookups", 500, "lookups per measurement, each over a random existing key")
	dataDir := flag.String("data", "", "ledger data directory; kept, and reused when it already holds the calls (default: a temporary directory, removed after)")
	batch := flag.Int("batch", 10000, "calls per insert")
	seed := flag.Uint64("seed", 1, "random seed of the generated ledger and the sampled keys")
	scans := flag.Int("scans", 10, "repetitions of each ledger view over the last 30 days (0: skip them)")
	explain := flag.Bool("explain", false, "print the engine's index use for one key of each lookup")
	quiet := flag.Duration("merges-quiet", 0, "before measuring, wait until no merge has run on the ledger's tables for this long (0: do not wait): lookups timed while merges run pay for them in CPU")
	copies := flag.Int("replicate", 1, "after generating -calls calls (or finding them in -data), copy them inside the engine until the ledger holds this many times as many, each copy under its own keys")
	cpuProfile := flag.String("cpuprofile", "", "write the Go side's CPU profile of the whole run to this file (the engine's own threads show only as cgo calls)")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			slog.Error("cpu profile", "err", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(context.Background(), *calls, *copies, *lookups, *batch, *scans, *seed, *dataDir, *explain, *quiet); err != nil {
		slog.Error("bench failed", "err", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

func run(ctx context.Context, calls, copies, lookups, batch, scans int, seed uint64, dir string, explain bool, quiet time.Duration) error {
	if calls <= 0 || copies <= 0 || lookups <= 0 || batch <= 0 || scans < 0 {
		return fmt.Errorf("-calls, -replicate, -lookups and -batch must be positive, -scans not negative")
	}
	if dir == "" {
		tmp, err := os.MkdirTemp("", "bench-lookup-")
		if err != nil {
			return err
		}
		defer func() { _ = os.RemoveAll(tmp) }()
		dir = tmp
	}
	eng, err := chdb.Open(dir)
	if err != nil {
		return err
	}
	defer func() { _ = eng.Close() }()
	store := ledgerstore.New(eng)
	if err = store.Migrate(ctx); err != nil {
		return err
	}
	stored, err := spanCount(ctx, eng)
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	switch {
	case stored >= calls*copies:
		fmt.Printf("lookup bench: reusing the %d calls already in the data directory\n", stored)
	case stored == calls:
		fmt.Printf("lookup bench: replicating the %d calls already in the data directory\n", stored)
	case stored > 0:
		return fmt.Errorf("the data directory holds %d calls, neither -calls nor -calls × -replicate; use an empty one", stored)
	default:
		g, newGeneratorErr := newGenerator(seed, calls, now.Add(-30*24*time.Hour), now)
		if newGeneratorErr != nil {
			return newGeneratorErr
		}
		t0 := time.Now()
		traces, evidence, insertTime, newGeneratorErr := generate(ctx, store, g, calls, batch)
		if newGeneratorErr != nil {
			return newGeneratorErr
		}
		fmt.Printf("lookup bench: generated %d calls in %d traces (%d tenants, 30 days) and %d evidence spans in %.1f s\n",
			calls, traces, len(tenants), evidence, time.Since(t0).Seconds())
		fmt.Printf("  building rows %.1f s, inserting (%d calls per batch, with their evidence spans) %.1f s\n",
			g.buildTime.Seconds(), batch, insertTime.Seconds())
		stored = calls
	}
	if stored == calls && copies > 1 {
		t0 := time.Now()
		if err = replicate(ctx, eng, copies); err != nil {
			return err
		}
		fmt.Printf("lookup bench: replicated the %d calls ×%d in %.1f s\n", calls, copies, time.Since(t0).Seconds())
	}
	if err = settle(ctx, eng); err != nil {
		return err
	}
	if err = waitMerges(ctx, eng, quiet); err != nil {
		return err
	}
	parts, err := activeParts(ctx, eng)
	if err != nil {
		return err
	}
	keys, err := sampleKeys(ctx, eng, lookups, seed, now.Add(-30*24*time.Hour))
	if err != nil {
		return err
	}
	if explain {
		if err = explainLookups(ctx, eng, keys); err != nil {
			return err
		}
	}
	fmt.Printf("  llm_calls: %d active parts; %d lookups per measurement over random existing keys, one at a time\n\n", parts, lookups)
	if err = printTableSizes(ctx, eng); err != nil {
		return err
	}
	client, stop, err := evidenceAPI(ctx, store, dir)
	if err != nil {
		return err
	}
	defer stop()
	results, err := measureLookups(ctx, store, client, keys, now)
	if err != nil {
		return err
	}
	printStats(results)
	base, complaint := results[0], results[1]
	fmt.Printf("\n  (a) p95 / baseline p95: %.1f×\n", float64(complaint.P95)/float64(base.P95))
	for _, s := range results[1:] {
		fmt.Printf("  %-58s p95 %s: target 60 s %s, aim 50 ms %s\n", s.Name, timing.Millis(s.P95), verdict(s.P95 <= target), verdict(s.P95 <= aim))
	}
	if scans == 0 {
		return nil
	}
	fmt.Printf("\n  ledger views, every tenant, last 30 days, %d times each:\n", scans)
	results, err = measureViews(ctx, store, scans, now)
	if err != nil {
		return err
	}
	printStats(results)
	return nil
}

func printStats(results []timing.Stats) {
	fmt.Printf("  %-58s %10s %10s %10s %10s\n", "", "p50", "p95", "max", "CPU/call")
	for _, s := range results {
		fmt.Printf("  %-58s %10s %10s %10s %10s\n", s.Name, timing.Millis(s.P50), timing.Millis(s.P95), timing.Millis(s.Max), timing.Millis(s.CPU))
	}
}

// measureViews times each ledger view over the last 30 days, after one
// untimed run.
func measureViews(ctx context.Context, store *ledgerstore.Store, n int, now time.Time) ([]timing.Stats, error) {
	f := views.Filter{Tenants: []string{views.AllTenants}, From: now.Add(-30 * 24 * time.Hour), To: now.Add(time.Minute)}
	type view struct {
		name string
		fn   func() (int, error)
	}
	list := []view{
		{"ListCalls, first page of 100", func() (int, error) {
			calls, _, err := views.ListCalls(ctx, store, f, 0, "")
			return len(calls), err
		}},
		{"ListCalls, one tenant and model, first page of 100", func() (int, error) {
			calls, _, err := views.ListCalls(ctx, store, views.Filter{Tenants: f.Tenants, From: f.From, To: f.To, Tenant: "wonka", Model: "gpt-4o"}, 0, "")
			return len(calls), err
		}},
		{"Costs by day", func() (int, error) {
			r, err := views.Costs(ctx, store, f, views.GroupDay)
			return len(r.Rows), err
		}},
		{"Costs by model", func() (int, error) {
			r, err := views.Costs(ctx, store, f, views.GroupModel)
			return len(r.Rows), err
		}},
		{"Timeseries by hour", func() (int, error) {
			s, err := views.Timeseries(ctx, store, f, views.BucketHour)
			return len(s.Points), err
		}},
		{"Latency", func() (int, error) {
			r, err := views.Latency(ctx, store, f)
			return int(r.Calls), err
		}},
		{"Facets", func() (int, error) {
			r, err := views.Facets(ctx, store, f)
			return len(r.Tenants), err
		}},
		{"Ledger totals (GET /api/v1/ledger/stats), whole ledger", func() (int, error) {
			c, err := store.CountCalls(ctx)
			return int(c.Calls), err
		}},
	}
	var out []timing.Stats
	for _, v := range list {
		fn := func(int) error {
			found, err := v.fn()
			return notFound(err, found, "call in the range")
		}
		if err := fn(0); err != nil {
			return nil, fmt.Errorf("%s: %w", v.name, err)
		}
		s, err := timing.Measure(v.name, n, fn)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

// keys are existing values to look up, one per lookup.
type keys struct {
	traces      []traceKey
	responseIDs []string
	endUsers    []string
}

type traceKey struct {
	Tenant  string `json:"tenant"`
	TraceID string `json:"trace_id"`
}

func sampleKeys(ctx context.Context, eng storage.Engine, n int, seed uint64, from time.Time) (keys, error) {
	var k keys
	params := map[string]any{"seed": seed, "n": uint64(n)}
	if err := queryRows(ctx, eng, sampleTraces, params, func(row []byte) error {
		var t traceKey
		err := json.Unmarshal(row, &t)
		k.traces = append(k.traces, t)
		return err
	}); err != nil {
		return k, err
	}
	strs := func(dst *[]string) func([]byte) error {
		return func(row []byte) error {
			var r struct {
				V string `json:"v"`
			}
			err := json.Unmarshal(row, &r)
			*dst = append(*dst, r.V)
			return err
		}
	}
	if err := queryRows(ctx, eng, sampleResponses, params, strs(&k.responseIDs)); err != nil {
		return k, err
	}
	params["from"] = from
	if err := queryRows(ctx, eng, sampleEndUsers, params, strs(&k.endUsers)); err != nil {
		return k, err
	}
	if len(k.traces) < n || len(k.responseIDs) < n || len(k.endUsers) < n {
		return k, fmt.Errorf("the ledger has too few keys for %d lookups", n)
	}
	return k, nil
}

func queryRows(ctx context.Context, eng storage.Engine, sql string, params map[string]any, fn func([]byte) error) error {
	q, err := storage.Bind(sql, params)
	if err != nil {
		return err
	}
	return eng.QueryJSON(ctx, q, fn)
}

// measureLookups runs the four measurements, the baseline first; each one
// checks that its key was found, so a lookup that silently finds nothing
// cannot look fast.
func measureLookups(ctx context.Context, store *ledgerstore.Store, client *apiclient.Client, k keys, now time.Time) ([]timing.Stats, error) {
	eng := store.Engine()
	n := len(k.traces)
	all := []string{views.AllTenants}
	type lookup struct {
		name string
		fn   func(i int) error
	}
	lookups := []lookup{
		{"baseline: count() by (tenant, trace_id), no FINAL", func(i int) error {
			var r struct {
				N int `json:"n"`
			}
			err := queryRows(ctx, eng, baselineLookup, map[string]any{"tenant": k.traces[i].Tenant, "trace_id": k.traces[i].TraceID}, func(row []byte) error {
				return json.Unmarshal(row, &r)
			})
			return notFound(err, r.N, "trace")
		}},
		{"(a) complaint lookup: CallsByTrace + EvidenceByTrace", func(i int) error {
			calls, err := store.CallsByTrace(ctx, k.traces[i].TraceID)
			if err != nil {
				return err
			}
			_, err = store.EvidenceByTrace(ctx, k.traces[i].TraceID)
			return notFound(err, len(calls), "trace")
		}},
		{"(b) views.Search by response_id", func(i int) error {
			kind, res, err := views.Search(ctx, store, k.responseIDs[i], time.Time{}, time.Time{}, all, 0)
			if err == nil && kind != views.KindResponseID {
				err = fmt.Errorf("found as %s", kind)
			}
			return notFound(err, len(res), "response ID")
		}},
		{"(c) views.Search by end_user_ref, last 30 days", func(i int) error {
			kind, res, err := views.Search(ctx, store, k.endUsers[i], now.Add(-30*24*time.Hour), now.Add(time.Minute), all, 0)
			if err == nil && kind != views.KindEndUser {
				err = fmt.Errorf("found as %s", kind)
			}
			return notFound(err, len(res), "end user")
		}},
		{"(d) GET /api/v1/evidence/{trace_id} over HTTP, API token", func(i int) error {
			var ev struct {
				Calls []json.RawMessage `json:"calls"`
			}
			err := client.Get(ctx, "/api/v1/evidence/"+k.traces[i].TraceID, &ev)
			return notFound(err, len(ev.Calls), "trace")
		}},
	}
	var out []timing.Stats
	for _, l := range lookups {
		// The first queries after start-up are slower; warm up on other keys.
		for i := 0; i < min(5, n); i++ {
			if err := l.fn(n - 1 - i); err != nil {
				return nil, fmt.Errorf("%s: warm-up: %w", l.name, err)
			}
		}
		s, err := timing.Measure(l.name, n, l.fn)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func notFound(err error, found int, what string) error {
	if err == nil && found == 0 {
		return fmt.Errorf("an existing %s was not found", what)
	}
	return err
}

// settle waits for the mutations a migration left running (an index's
// fill of the calls already stored), so that the lookups time the ledger
// as it will stay, and prints how long the wait took.
func settle(ctx context.Context, eng storage.Engine) error {
	t0 := time.Now()
	for {
		var r struct {
			Pending int `json:"pending"`
		}
		if err := eng.QueryJSON(ctx, pendingSQL, func(row []byte) error { return json.Unmarshal(row, &r) }); err != nil {
			return err
		}
		if r.Pending == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if d := time.Since(t0); d > time.Second {
		fmt.Printf("  waited %.1f s for the migrations' background mutations\n", d.Seconds())
	}
	return nil
}

// waitMerges waits until no merge has run on the ledger's tables for
// quiet, polling every second, and prints how long that took.
func waitMerges(ctx context.Context, eng storage.Engine, quiet time.Duration) error {
	if quiet <= 0 {
		return nil
	}
	t0, lastSeen := time.Now(), time.Now()
	for time.Since(lastSeen) < quiet {
		var r struct {
			Merges int `json:"merges"`
		}
		if err := eng.QueryJSON(ctx, runningMerges, func(row []byte) error { return json.Unmarshal(row, &r) }); err != nil {
			return err
		}
		if r.Merges > 0 {
			lastSeen = time.Now()
		}
		time.Sleep(time.Second)
	}
	fmt.Printf("  waited %.0f s for the merges to end (none for %s)\n", time.Since(t0).Seconds(), quiet)
	return nil
}

func spanCount(ctx context.Context, eng storage.Engine) (int, error) {
	var r struct {
		Spans int `json:"spans"`
	}
	err := eng.QueryJSON(ctx, spanCountSQL, func(row []byte) error {
		return json.Unmarshal(row, &r)
	})
	return r.Spans, err
}

func activeParts(ctx context.Context, eng storage.Engine) (int, error) {
	var r struct {
		Parts int `json:"parts"`
	}
	err := eng.QueryJSON(ctx, activePartsSQL, func(row []byte) error {
		return json.Unmarshal(row, &r)
	})
	return r.Parts, err
}

// printTableSizes prints each ledger table's active rows and its bytes,
// compressed on disk and uncompressed: the per-row costs a capacity plan
// starts from (deploy/CAPACITY.md).
func printTableSizes(ctx context.Context, eng storage.Engine) error {
	fmt.Printf("  %-20s %12s %14s %14s %10s %10s\n", "table", "rows", "on disk", "uncompressed", "B/row", "ratio")
	err := eng.QueryJSON(ctx, tableSizesSQL, func(row []byte) error {
		var r struct {
			Table        string `json:"table"`
			Rows         uint64 `json:"rows"`
			OnDisk       uint64 `json:"on_disk"`
			Uncompressed uint64 `json:"uncompressed"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		perRow, ratio := 0.0, 0.0
		if r.Rows > 0 && r.OnDisk > 0 {
			perRow, ratio = float64(r.OnDisk)/float64(r.Rows), float64(r.Uncompressed)/float64(r.OnDisk)
		}
		fmt.Printf("  %-20s %12d %14d %14d %10.1f %9.1f×\n", r.Table, r.Rows, r.OnDisk, r.Uncompressed, perRow, ratio)
		return nil
	})
	fmt.Println()
	return err
}

// explainLookups prints which parts and granules each lookup's query reads,
// for the first sampled key.
func explainLookups(ctx context.Context, eng storage.Engine, k keys) error {
	t := k.traces[0]
	for _, q := range []struct {
		name, sql string
		params    map[string]any
	}{
		{"baseline", baselineLookup, map[string]any{"tenant": t.Tenant, "trace_id": t.TraceID}},
		{"calls_by_trace", queries.MustGet("calls_by_trace"), map[string]any{"trace_id": t.TraceID}},
		{"spans_by_trace", queries.MustGet("spans_by_trace"), map[string]any{"trace_id": t.TraceID}},
	} {
		sql, err := storage.Bind(q.sql, q.params)
		if err != nil {
			return err
		}
		// EXPLAIN does not stream; select its rows instead. Settings go
		// outside the subquery.
		sql, settings, _ := strings.Cut(sql, "SETTINGS")
		fmt.Printf("  EXPLAIN indexes = 1, %s:\n", q.name)
		wrapped := "SELECT explain FROM (EXPLAIN indexes = 1 " + sql + ")"
		if settings != "" {
			wrapped += " SETTINGS" + settings
		}
		var index, name, parts string
		err = eng.QueryJSON(ctx, wrapped, func(row []byte) error {
			var r struct {
				Explain string `json:"explain"`
			}
			if unmarshalErr := json.Unmarshal(row, &r); unmarshalErr != nil {
				return unmarshalErr
			}
			line := strings.TrimLeft(r.Explain, " │└─├")
			switch {
			case line == "Min-Max" || line == "Partition" || line == "PrimaryKey" || line == "Skip" || line == "PrimaryKeyExpand":
				index, name = line, ""
			case strings.HasPrefix(line, "Name: "):
				name = " " + strings.TrimPrefix(line, "Name: ")
			case strings.HasPrefix(line, "Parts: ") && index != "":
				parts = strings.TrimPrefix(line, "Parts: ")
			case strings.HasPrefix(line, "Granules: ") && index != "":
				fmt.Printf("    %-28s parts %-8s granules %s\n", index+name, parts, strings.TrimPrefix(line, "Granules: "))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
