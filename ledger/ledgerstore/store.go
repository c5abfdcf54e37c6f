// Package ledgerstore reads and writes the ledger tables in a ClickHouse
// engine through the SQL of the queries package.
package ledgerstore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docketlabs/docket/internal/groupcommit"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/lease"
	"github.com/docketlabs/docket/ledger/rowbinary"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// Store reads and writes the ledger tables through a storage engine.
type Store struct {
	eng    storage.Engine
	schema queries.Schema
}

// New wraps an engine of one node. Call Migrate before use.
func New(eng storage.Engine) *Store { return &Store{eng: eng} }

// NewCluster wraps an engine whose schema is rendered for a cluster
// (queries.Schema).
func NewCluster(eng storage.Engine, schema queries.Schema) *Store {
	return &Store{eng: eng, schema: schema}
}

// Statement returns the named query as this ledger's schema runs it (a
// delete differs on a cluster: queries.Schema.Statement).
func (s *Store) Statement(name string) (string, error) { return s.schema.Statement(name) }

// Engine returns the underlying storage.
func (s *Store) Engine() storage.Engine { return s.eng }

// Migrate applies the schema migrations not yet recorded. Each migration
// can run again (IF NOT EXISTS, or a guard on the statements that cannot),
// so a crash between applying and recording one is repaired by running it
// again.
func (s *Store) Migrate(ctx context.Context) error { return s.MigrateTo(ctx, math.MaxUint32) }

// migrateMu serializes migrations: the embedded engine is shared by the
// components of one process, and each opens the store.
var migrateMu sync.Mutex

// Processes sharing a ledger on a server (gateways) take the lease
// migrateLease before migrating, so that one applies the migrations while
// the others wait and then find them applied: two copy-and-swap migrations
// at once (0007) swap the old table back. The lease lives in the ledger
// (queries.Schema.Bootstrap creates its table) and expires by the engine's
// clock, so a migrating process that dies delays the others by migrateTTL.
// An embedded ledger is one process's own (the engine locks its data
// directory) and needs no lease; nor could it renew one while it runs a
// long statement, since it runs one at a time.
const (
	migrateLease = "schema"
	migrateTTL   = time.Minute
	migrateRenew = 5 * time.Second
)

// migrateWait bounds how long a process waits for another one's migrations.
var migrateWait = 15 * time.Minute

// MigrateTo applies the migrations up to version last (tests start from an
// older schema with it).
func (s *Store) MigrateTo(ctx context.Context, last uint32) error {
	migrateMu.Lock()
	defer migrateMu.Unlock()
	boot, err := s.schema.Bootstrap()
	if err != nil {
		return err
	}
	for _, stmt := range boot {
		if err = s.eng.Exec(ctx, stmt.SQL); err != nil {
			return fmt.Errorf("ledger: create the migration tables: %w", err)
		}
	}
	pending, err := s.pending(ctx, last)
	if err != nil || len(pending) == 0 {
		return err
	}
	if _, shared := storage.FilesOf(s.eng); !shared {
		return s.apply(ctx, pending)
	}
	l, err := lease.New(s.eng, migrateLease, lease.NewHolderID(), migrateTTL)
	if err != nil {
		return err
	}
	keeper := lease.NewKeeper(l, migrateRenew, nil)
	keeper.Start()
	defer func() { _ = keeper.Stop(context.WithoutCancel(ctx), true) }()
	work, done, err := enter(ctx, keeper, l)
	if err != nil {
		return err
	}
	defer done()
	// Another process may have applied them while this one waited.
	if pending, err = s.pending(work, last); err != nil {
		return err
	}
	return s.apply(work, pending)
}

// enter waits until the keeper holds the migration lease, at most
// migrateWait, and returns the context the migrations run in (cancelled
// if the lease is lost).
func enter(ctx context.Context, keeper *lease.Keeper, l *lease.Lease) (context.Context, context.CancelFunc, error) {
	deadline := time.NewTimer(migrateWait)
	defer deadline.Stop()
	tick := time.NewTicker(migrateRenew / 20)
	defer tick.Stop()
	for {
		if work, done, ok := keeper.Enter(ctx); ok {
			return work, done, nil
		}
		select {
		case <-ctx.Done():
			return nil, nil, fmt.Errorf("ledger: wait for the migration lease: %w", ctx.Err())
		case <-deadline.C:
			cur, err := l.Current(ctx)
			return nil, nil, fmt.Errorf("ledger: another process (%s, term %d, %s left by the engine's clock) has held the migration lease for over %s; "+
				"it expires %s after its holder stops renewing it (%v)", cur.Holder, cur.Term, cur.Remaining, migrateWait, migrateTTL, err)
		case <-tick.C:
		}
	}
}

// pending returns the migrations up to last not yet recorded, in order.
func (s *Store) pending(ctx context.Context, last uint32) ([]queries.Migration, error) {
	applied := map[uint32]bool{}
	err := s.eng.QueryJSON(ctx, queries.MustGet("applied_migrations"), func(row []byte) error {
		var r struct {
			Version uint32 `json:"version"`
		}
		if unmarshalErr := json.Unmarshal(row, &r); unmarshalErr != nil {
			return unmarshalErr
		}
		applied[r.Version] = true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("ledger: read applied migrations: %w", err)
	}
	migrations, err := s.schema.Migrations()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(migrations, func(m queries.Migration) bool { return applied[m.Version] || m.Version > last }), nil
}

// apply runs the migrations in order, recording each once it has run.
func (s *Store) apply(ctx context.Context, ms []queries.Migration) error {
	for _, m := range ms {
		if err := s.applyOne(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) applyOne(ctx context.Context, m queries.Migration) error {
	for i, stmt := range m.Statements {
		run, err := s.guard(ctx, stmt.OnlyIf)
		if err != nil {
			return fmt.Errorf("ledger: migration %s statement %d: guard: %w", m.Name, i+1, err)
		}
		if !run {
			continue
		}
		if err := s.eng.Exec(ctx, stmt.SQL); err != nil {
			return fmt.Errorf("ledger: migration %s statement %d: %w", m.Name, i+1, err)
		}
	}
	rec, err := storage.Bind(queries.MustGet("record_migration"), map[string]any{"version": m.Version, "name": m.Name})
	if err != nil {
		return err
	}
	if err := s.eng.Exec(ctx, rec); err != nil {
		return fmt.Errorf("ledger: record migration %s: %w", m.Name, err)
	}
	return nil
}

// guard runs a statement's "only if" query: no query means run.
func (s *Store) guard(ctx context.Context, q string) (bool, error) {
	if q == "" {
		return true, nil
	}
	var r struct {
		Run any `json:"run"`
	}
	if err := s.eng.QueryJSON(ctx, q, func(row []byte) error { return json.Unmarshal(row, &r) }); err != nil {
		return false, err
	}
	// A comparison is a UInt8 in ClickHouse, a Bool a JSON bool.
	switch run := r.Run.(type) {
	case bool:
		return run, nil
	case float64:
		return run != 0, nil
	}
	return false, fmt.Errorf("run is %v, want a number or a bool", r.Run)
}

// InsertCalls writes call rows. Writing a row again is harmless: under
// FINAL and after merges the first ingest of a (tenant, trace_id, span_id)
// wins (ReplacingMergeTree ordered by ingest_order), and a different row
// under a known key is kept as a conflict (ConflictsByTrace).
func (s *Store) InsertCalls(ctx context.Context, calls []ledger.Call) error {
	if len(calls) == 0 {
		return nil
	}
	buf := insertBuffers.Get().(*[]byte)
	defer insertBuffers.Put(buf)
	// One allocation for the rows: they encode to a few hundred bytes each.
	b, err := rowbinary.EncodeCalls(slices.Grow((*buf)[:0], len(calls)*512), calls)
	if err != nil {
		return fmt.Errorf("ledger: encode rows: %w", err)
	}
	*buf = b
	traces := make([]string, len(calls))
	for i := range calls {
		traces[i] = calls[i].TraceID
	}
	return s.InsertBatch(ctx, [][]byte{b}, len(calls), traces, nil)
}

// InsertBatch writes n call rows encoded by EncodeCalls, in chunks of
// whole rows, like InsertCalls (traces are the rows' trace IDs), and
// evidence spans, like InsertEvidence. One rewrite of the kept calls
// follows both: its fixed part is the engine's largest cost per batch
// (RefreshCalls), and a batch's evidence is mostly of its calls' traces.
func (s *Store) InsertBatch(ctx context.Context, chunks [][]byte, n int, traces []string, evidence []ledger.EvidenceSpan) error {
	if n > 0 {
		if err := s.insertRows(ctx, "insert_llm_calls", "RowBinary", n, chunks...); err != nil {
			return err
		}
	}
	if err := insertJSON(ctx, s, "insert_evidence_spans", evidence); err != nil {
		return err
	}
	// Only their content references make evidence spans part of a call.
	refreshed := slices.Clip(traces) // appending must not write into the caller's array
	for i := range evidence {
		if len(evidence[i].ContentRefs) > 0 {
			refreshed = append(refreshed, evidence[i].TraceID)
		}
	}
	return s.RefreshCalls(ctx, refreshed)
}

// refreshBytes bounds the trace IDs of one rewrite: the list is a literal,
// twice, of a statement the engine parses whole (max_query_size, 256 KiB).
const refreshBytes = 96 << 10

// RefreshCalls rewrites the kept provider_calls rows of traces from the
// stored rows (migration 0012). Every write to the rows that make up calls
// (call rows, evidence spans' and log records' content references, expiry)
// is followed by it; until it has run, the calls of those traces read as
// they were. Running it again is harmless, so a writer that fails here
// fails its write, and writing again repairs both.
//
// The rewrites of concurrent writers on one engine are a group commit:
// while one runs, the writers that arrive wait, and the next rewrite covers
// all of them. Each statement costs the engine 80-120 ms of CPU whatever
// the number of traces (the view's analysis), and 55-80 µs more per trace
// of one call (BenchmarkRefreshCalls, a loaded 2-core machine), so under
// load the fixed part is paid once per round instead of once per batch.
func (s *Store) RefreshCalls(ctx context.Context, traces []string) error {
	if len(traces) == 0 {
		return nil
	}
	c, _ := refreshers.LoadOrStore(s.eng, new(groupcommit.Committer[*refreshJob]))
	job := &refreshJob{traces: traces}
	// A cancelled writer does not fail the others' round.
	round := context.WithoutCancel(ctx)
	c.(*groupcommit.Committer[*refreshJob]).Do(job, func(jobs []*refreshJob) {
		var all []string
		for _, j := range jobs {
			all = append(all, j.traces...)
		}
		// A round's error fails every writer in it: each writes again.
		err := s.rewrite(round, all)
		for _, j := range jobs {
			j.err = err
		}
	})
	return job.err
}

// refreshers holds the group commit of each engine: the components of a
// process each open a store on the one embedded engine.
var refreshers sync.Map // storage.Engine → *groupcommit.Committer[*refreshJob]

type refreshJob struct {
	traces []string
	err    error
}

// rewrite runs refresh_provider_calls over traces, as few statements as
// the size of the list allows.
func (s *Store) rewrite(ctx context.Context, traces []string) error {
	traces = slices.Compact(slices.Sorted(slices.Values(traces)))
	for len(traces) > 0 {
		n, size := 0, 0
		for n < len(traces) && (n == 0 || size+len(traces[n])+1 <= refreshBytes) {
			size += len(traces[n]) + 1
			n++
		}
		q, err := storage.Bind(queries.MustGet("refresh_provider_calls"), map[string]any{
			"traces": strings.Join(traces[:n], "\n"), "version": time.Now(),
		})
		if err != nil {
			return err
		}
		if err = s.eng.Exec(ctx, q); err != nil {
			return fmt.Errorf("ledger: refresh the calls of %d traces: %w", n, err)
		}
		traces = traces[n:]
	}
	return nil
}

// RefreshCallsBefore rewrites the kept calls of tenant's traces that an
// expiry at cutoff may have changed.
func (s *Store) RefreshCallsBefore(ctx context.Context, tenant string, cutoff time.Time) error {
	var traces []string
	err := s.query(ctx, "provider_call_traces_before", map[string]any{"tenant": tenant, "cutoff": cutoff}, func(row []byte) error {
		var r struct {
			TraceID string `json:"trace_id"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		traces = append(traces, r.TraceID)
		return nil
	})
	if err != nil {
		return err
	}
	return s.RefreshCalls(ctx, traces)
}

// InsertEvidence writes evidence span rows, first write winning like
// InsertCalls.
func (s *Store) InsertEvidence(ctx context.Context, spans []ledger.EvidenceSpan) error {
	return s.InsertBatch(ctx, nil, 0, nil, spans)
}

// InsertLogRefs writes the links of log records' content references to
// their spans. A link written again is the same row.
func (s *Store) InsertLogRefs(ctx context.Context, links []ledger.LogContentRef) error {
	if err := insertJSON(ctx, s, "insert_log_content_refs", links); err != nil {
		return err
	}
	traces := make([]string, len(links))
	for i := range links {
		traces[i] = links[i].TraceID
	}
	return s.RefreshCalls(ctx, traces)
}

// insertJSON runs the named INSERT with rows as JSONEachRow.
func insertJSON[T any](ctx context.Context, s *Store, name string, rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	buf := insertBuffers.Get().(*[]byte)
	defer insertBuffers.Put(buf)
	b := (*buf)[:0]
	for i := range rows {
		row, err := json.Marshal(&rows[i])
		if err != nil {
			return fmt.Errorf("ledger: encode rows: %w", err)
		}
		b = append(append(b, row...), '\n')
	}
	*buf = b
	return s.insertRows(ctx, name, "JSONEachRow", len(rows), b)
}

// insertRows runs the named INSERT with n rows of data.
func (s *Store) insertRows(ctx context.Context, name, format string, n int, data ...[]byte) error {
	if err := s.eng.Insert(ctx, queries.MustGet(name), format, data...); err != nil {
		return fmt.Errorf("ledger: insert %d rows (%s): %w", n, name, err)
	}
	return nil
}

// insertBuffers keeps statement buffers between batches: allocating and
// zeroing megabytes per insert was a visible share of the exporter's CPU.
var insertBuffers = sync.Pool{New: func() any { return new([]byte) }}

// keptCall is a row of provider_call_rows: a call as one rewrite of its
// trace kept it.
type keptCall struct {
	ledger.Call
	Version   time.Time `json:"version"`
	IsDeleted uint8     `json:"is_deleted"`
}

// CallsByTrace returns the calls of one trace in start order: in each
// tenant, the rows of the trace's newest rewrite that are not tombstones,
// so that an older rewrite landing after a newer one (two writers racing)
// cannot show a key the newer one no longer has.
func (s *Store) CallsByTrace(ctx context.Context, traceID string) ([]ledger.Call, error) {
	var rows []keptCall
	if err := s.query(ctx, "calls_by_trace", map[string]any{"trace_id": traceID}, storage.DecodeRows(&rows)); err != nil {
		return nil, err
	}
	newest := map[string]time.Time{}
	for _, r := range rows {
		if r.Version.After(newest[r.Tenant]) {
			newest[r.Tenant] = r.Version
		}
	}
	var out []ledger.Call
	for _, r := range rows {
		// FINAL leaves out a key whose newest row is a tombstone; a
		// tombstone that still comes through is not a call either.
		if r.IsDeleted == 0 && r.Version.Equal(newest[r.Tenant]) {
			out = append(out, r.Call)
		}
	}
	return out, nil
}

// QueryCalls runs the named query of package queries, which selects whole
// llm_calls rows (with cost_usd as a string), and decodes them.
func (s *Store) QueryCalls(ctx context.Context, name string, params map[string]any) ([]ledger.Call, error) {
	var out []ledger.Call
	err := s.query(ctx, name, params, storage.DecodeRows(&out))
	return out, err
}

// EvidenceByTrace returns the evidence spans of one trace in start order.
func (s *Store) EvidenceByTrace(ctx context.Context, traceID string) ([]ledger.EvidenceSpan, error) {
	var out []ledger.EvidenceSpan
	err := s.query(ctx, "spans_by_trace", map[string]any{"trace_id": traceID}, storage.DecodeRows(&out))
	return out, err
}

// LogRefsByTrace returns the links of a trace's log records' content
// references to its spans, in one tenant.
func (s *Store) LogRefsByTrace(ctx context.Context, tenant, traceID string) ([]ledger.LogContentRef, error) {
	var out []ledger.LogContentRef
	err := s.query(ctx, "log_refs_by_trace", map[string]any{"tenant": tenant, "trace_id": traceID}, storage.DecodeRows(&out))
	return out, err
}

// Counts describes the call table.
type Counts struct {
	// Calls is the number of provider calls every reader sees
	// (deduplicated, the spans of one call merged).
	Calls uint64 `json:"calls"`
	// Spans is the number of call spans (deduplicated).
	Spans uint64 `json:"spans"`
	// DistinctCalls is the number of distinct call keys; it differs from
	// Calls only if deduplication failed.
	DistinctCalls uint64 `json:"distinct_calls"`
	// StoredRows counts physical rows, redelivered ones included until
	// merges collapse them.
	StoredRows uint64 `json:"stored_rows"`
	// Conflicts counts row versions (of calls and evidence spans) that
	// arrived under a known key with other content and were not applied.
	Conflicts uint64 `json:"conflicts"`
}

// CountCalls counts the call table. The calls are counted from the kept
// rows, as every reader sees them: a write whose rewrite of its traces'
// kept rows failed (its writer got the error) counts once redelivered.
func (s *Store) CountCalls(ctx context.Context) (Counts, error) {
	var c Counts
	err := s.query(ctx, "count_calls", nil, func(row []byte) error { return json.Unmarshal(row, &c) })
	return c, err
}

func (s *Store) query(ctx context.Context, name string, params map[string]any, fn func([]byte) error) error {
	q := queries.MustGet(name)
	if params != nil {
		var err error
		if q, err = storage.Bind(q, params); err != nil {
			return err
		}
	}
	if err := s.eng.QueryJSON(ctx, q, fn); err != nil {
		return fmt.Errorf("ledger: %s: %w", name, err)
	}
	return nil
}
