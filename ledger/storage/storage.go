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

// ErrStop may be returned by a QueryJSON callback to end iteration early
// without an error.
var ErrStop = errors.New("storage: stop iteration")
