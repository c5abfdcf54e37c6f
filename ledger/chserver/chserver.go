// Package chserver runs the ledger on a ClickHouse server through
// clickhouse-go v2. It is a thin adapter over the same SQL the embedded
// engine runs: statements are executed as text, and rows come back as JSON
// through formatRowNoNewline so both engines hand the ledger identical rows.
package chserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/docketlabs/docket/ledger/engine"
)

// Engine is a connection pool to a ClickHouse server.
type Engine struct {
	conn driver.Conn
}

// ErrUnauthenticated is returned for a DSN without a password unless the
// caller allows it: an open ClickHouse with chat logs is a breach.
var ErrUnauthenticated = errors.New("chserver: refusing a ClickHouse server without authentication (set a password in the DSN or allow_unauthenticated: true)")

// Open connects to the server named by dsn (clickhouse://user:pass@host:9440/db?secure=true).
func Open(ctx context.Context, dsn string, allowUnauthenticated bool) (*Engine, error) {
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		// The DSN may hold a password: do not echo it.
		return nil, errors.New("chserver: invalid DSN")
	}
	if opts.Auth.Password == "" && !allowUnauthenticated {
		return nil, ErrUnauthenticated
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("chserver: open: %w", err)
	}
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("chserver: ping %v: %w", opts.Addr, err)
	}
	return &Engine{conn: conn}, nil
}

// Exec implements engine.Engine.
func (e *Engine) Exec(ctx context.Context, query string) error {
	if err := e.conn.Exec(ctx, query); err != nil {
		return fmt.Errorf("chserver: exec: %w", engine.ScrubError(err))
	}
	return nil
}

// Insert implements engine.Engine with the rows inline after FORMAT, which
// the server reads from the query (native protocol).
func (e *Engine) Insert(ctx context.Context, query, format string, data ...[]byte) error {
	var b strings.Builder
	b.WriteString(query)
	b.WriteString(" FORMAT ")
	b.WriteString(format)
	b.WriteByte('\n')
	for _, chunk := range data {
		b.Write(chunk)
	}
	return e.Exec(ctx, b.String())
}

// QueryJSON implements engine.Engine.
func (e *Engine) QueryJSON(ctx context.Context, query string, fn func([]byte) error) error {
	rows, err := e.conn.Query(ctx, "SELECT formatRowNoNewline('JSONEachRow', *) FROM ("+query+")")
	if err != nil {
		return fmt.Errorf("chserver: query: %w", engine.ScrubError(err))
	}
	defer rows.Close()
	var line string
	for rows.Next() {
		if err := rows.Scan(&line); err != nil {
			return fmt.Errorf("chserver: scan: %w", engine.ScrubError(err))
		}
		if err := fn([]byte(line)); err != nil {
			if errors.Is(err, engine.ErrStop) {
				return nil
			}
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("chserver: rows: %w", engine.ScrubError(err))
	}
	return nil
}

// Close implements engine.Engine.
func (e *Engine) Close() error { return e.conn.Close() }

var _ engine.Engine = (*Engine)(nil)
