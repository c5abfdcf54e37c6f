package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"sync"

	"github.com/docketlabs/docket/ledger/engine"
	"github.com/docketlabs/docket/queries"
)

// Store reads and writes the ledger tables through an engine.
type Store struct {
	eng engine.Engine
}

// NewStore wraps an engine. Call Migrate before use.
func NewStore(eng engine.Engine) *Store { return &Store{eng: eng} }

// Engine returns the underlying engine.
func (s *Store) Engine() engine.Engine { return s.eng }

// Migrate applies the schema migrations not yet recorded. Each migration is
// idempotent DDL (IF NOT EXISTS), so a crash between applying and recording
// one is repaired by running it again.
func (s *Store) Migrate(ctx context.Context) error {
	if err := s.eng.Exec(ctx, queries.MustGet("schema_migrations")); err != nil {
		return fmt.Errorf("ledger: create schema_migrations: %w", err)
	}
	applied := map[uint32]bool{}
	err := s.eng.QueryJSON(ctx, queries.MustGet("applied_migrations"), func(row []byte) error {
		var r struct {
			Version uint32 `json:"version"`
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		applied[r.Version] = true
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledger: read applied migrations: %w", err)
	}
	migrations, err := queries.Migrations()
	if err != nil {
		return err
	}
	for _, m := range migrations {
		if applied[m.Version] {
			continue
		}
		for i, stmt := range m.Statements {
			if err := s.eng.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("ledger: migration %s statement %d: %w", m.Name, i+1, err)
			}
		}
		rec, err := engine.Bind(queries.MustGet("record_migration"), map[string]any{"version": m.Version, "name": m.Name})
		if err != nil {
			return err
		}
		if err := s.eng.Exec(ctx, rec); err != nil {
			return fmt.Errorf("ledger: record migration %s: %w", m.Name, err)
		}
	}
	return nil
}

// InsertCalls writes call rows. Retrying the same rows is harmless: the
// dedup token drops a repeated block at insert, and ReplacingMergeTree on
// (tenant, trace_id, span_id) collapses any row that arrives again in a
// different batch.
func (s *Store) InsertCalls(ctx context.Context, calls []Call) error {
	if len(calls) == 0 {
		return nil
	}
	keys := make([]string, len(calls))
	for i := range calls {
		keys[i] = CallKey(&calls[i])
	}
	return s.insert(ctx, "insert_llm_calls", "RowBinary", keys, func(b []byte) ([]byte, error) { return EncodeCalls(b, calls) })
}

// InsertCallRows writes call rows encoded by EncodeCalls, in chunks of
// whole rows, whose keys (CallKey) are given in order, idempotently like
// InsertCalls.
func (s *Store) InsertCallRows(ctx context.Context, chunks [][]byte, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return s.insertRows(ctx, "insert_llm_calls", "RowBinary", keys, chunks...)
}

// CallKey is a call's row key: (tenant, trace_id, span_id).
func CallKey(c *Call) string { return c.Tenant + "\x00" + c.TraceID + "\x00" + c.SpanID }

// InsertEvidence writes evidence span rows, idempotently like InsertCalls.
func (s *Store) InsertEvidence(ctx context.Context, spans []EvidenceSpan) error {
	if len(spans) == 0 {
		return nil
	}
	keys := make([]string, len(spans))
	for i, e := range spans {
		keys[i] = e.Tenant + "\x00" + e.TraceID + "\x00" + e.SpanID
	}
	return s.insert(ctx, "insert_evidence_spans", "JSONEachRow", keys, func(b []byte) ([]byte, error) {
		for i := range spans {
			row, err := json.Marshal(&spans[i])
			if err != nil {
				return b, err
			}
			b = append(append(b, row...), '\n')
		}
		return b, nil
	})
}

// insert runs the named INSERT with the rows encode appends, in format.
func (s *Store) insert(ctx context.Context, name, format string, keys []string, encode func([]byte) ([]byte, error)) error {
	buf := insertBuffers.Get().(*[]byte)
	defer insertBuffers.Put(buf)
	// One allocation for the rows: they encode to a few hundred bytes each.
	b, err := encode(slices.Grow((*buf)[:0], len(keys)*512))
	if err != nil {
		return fmt.Errorf("ledger: encode rows: %w", err)
	}
	*buf = b
	return s.insertRows(ctx, name, format, keys, b)
}

// insertRows runs the named INSERT with data, whose rows have keys, under a
// dedup token made of the keys.
func (s *Store) insertRows(ctx context.Context, name, format string, keys []string, data ...[]byte) error {
	query, err := engine.Bind(queries.MustGet(name), map[string]any{"token": dedupToken(keys)})
	if err != nil {
		return err
	}
	if err := s.eng.Insert(ctx, query, format, data...); err != nil {
		return fmt.Errorf("ledger: insert %d rows (%s): %w", len(keys), name, err)
	}
	return nil
}

// insertBuffers keeps statement buffers between batches: allocating and
// zeroing megabytes per insert was a visible share of the exporter's CPU.
var insertBuffers = sync.Pool{New: func() any { return new([]byte) }}

// dedupToken identifies a batch by its row keys, independent of order and of
// ingestion time, so a retried batch carries the same token.
func dedupToken(keys []string) string {
	sorted := append([]string(nil), keys...)
	sort.Strings(sorted)
	h := sha256.New()
	for _, k := range sorted {
		h.Write([]byte(k))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

var traceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidTraceID reports whether id is a trace ID as the ledger stores it
// (32 lowercase hex digits, not all zero).
func ValidTraceID(id string) bool {
	return traceIDPattern.MatchString(id) && id != "00000000000000000000000000000000"
}

// CallsByTrace returns the calls of one trace in start order.
func (s *Store) CallsByTrace(ctx context.Context, traceID string) ([]Call, error) {
	return s.QueryCalls(ctx, "calls_by_trace", map[string]any{"trace_id": traceID})
}

// QueryCalls runs the named query of package queries, which selects whole
// llm_calls rows (with cost_usd as a string), and decodes them.
func (s *Store) QueryCalls(ctx context.Context, name string, params map[string]any) ([]Call, error) {
	var out []Call
	err := s.query(ctx, name, params, engine.DecodeRows(&out))
	return out, err
}

// EvidenceByTrace returns the evidence spans of one trace in start order.
func (s *Store) EvidenceByTrace(ctx context.Context, traceID string) ([]EvidenceSpan, error) {
	var out []EvidenceSpan
	err := s.query(ctx, "spans_by_trace", map[string]any{"trace_id": traceID}, engine.DecodeRows(&out))
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
}

// CountCalls counts the call table.
func (s *Store) CountCalls(ctx context.Context) (Counts, error) {
	var c Counts
	err := s.query(ctx, "count_calls", nil, func(row []byte) error { return json.Unmarshal(row, &c) })
	return c, err
}

func (s *Store) query(ctx context.Context, name string, params map[string]any, fn func([]byte) error) error {
	q := queries.MustGet(name)
	if params != nil {
		var err error
		if q, err = engine.Bind(q, params); err != nil {
			return err
		}
	}
	if err := s.eng.QueryJSON(ctx, q, fn); err != nil {
		return fmt.Errorf("ledger: %s: %w", name, err)
	}
	return nil
}
