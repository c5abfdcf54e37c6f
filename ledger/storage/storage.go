// Package storage is the narrow seam between the ledger and a ClickHouse
// engine: the embedded chDB library or a ClickHouse server. Both run the same
// SQL from the queries package; results come back as one JSON object per row,
// which both engines produce natively, so no driver-specific scanning leaks
// into the ledger.
//
// The one name for the ledger's storage: this package is the interface and
// the SQL literal helpers; storage/chdb (embedded) and storage/clickhouse
// (server) are its adapters; ledger/storageconfig opens the one the
// `storage:` configuration key chooses.
package storage

import (
	"context"
	"errors"
	"io"
)

// Engine executes ClickHouse SQL. Implementations must be safe for concurrent
// use; the embedded engine serializes internally.
type Engine interface {
	// Exec runs a statement that returns no rows.
	Exec(ctx context.Context, query string) error
	// Insert runs an INSERT statement (without FORMAT clause) whose rows,
	// in format, are the chunks of data one after another; each chunk holds
	// whole rows, so batches merged from several sources go in without
	// being copied together. Binary formats are safe: the rows are not
	// parsed as part of the query text.
	Insert(ctx context.Context, query, format string, data ...[]byte) error
	// QueryJSON runs a SELECT and calls fn with each row as one JSON object.
	// The slice is only valid during the call.
	QueryJSON(ctx context.Context, query string, fn func(row []byte) error) error
	// Close releases the engine.
	Close() error
}

// FileEngine is an engine that hands whole files over its connection: a
// server, whose HTTP interface answers a query as one file of a format and
// takes files as external tables. The embedded engine is not one: its
// results stream in chunks that are files each, so it writes and reads
// files by path where this process runs.
type FileEngine interface {
	Engine
	// QueryFile writes the result of query as one file in format to w.
	QueryFile(ctx context.Context, query, format string, w io.Writer) error
	// QueryOver runs a SELECT that reads data, a file in format whose
	// columns are structure, as the table named table, and calls fn with
	// each row as one JSON object.
	QueryOver(ctx context.Context, query, table, format, structure string, data io.Reader, fn func(row []byte) error) error
}

// FilesOf returns the FileEngine behind eng: eng itself, or the engine a
// wrapper (one with an Underlying method, such as a ledger that reopens
// its engine) holds now.
func FilesOf(eng Engine) (FileEngine, bool) {
	if w, ok := eng.(interface{ Underlying() Engine }); ok {
		if inner := w.Underlying(); inner != nil {
			eng = inner
		}
	}
	fe, ok := eng.(FileEngine)
	return fe, ok
}

// ErrStop may be returned by a QueryJSON callback to end iteration early
// without an error.
var ErrStop = errors.New("storage: stop iteration")
