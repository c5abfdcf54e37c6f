// Package chdb runs the ledger on chDB, the ClickHouse engine as an
// in-process library (libchdb.so loaded at run time, no cgo).
//
// chDB allows one session per process and one process per data directory,
// and runs queries one at a time. Open therefore hands out references to a
// single process-wide session: the ledger exporter, the UI and background
// jobs in one process share it, and a second directory is refused.
package chdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/docketlabs/docket/ledger/storage"
)

var (
	mu     sync.Mutex
	shared *session
)

type session struct {
	dir  string
	refs int
	c    *conn
	// chDB runs one query at a time; serialize here so callers see latency,
	// not errors. A channel, so that a caller whose deadline passes while
	// it waits gives up instead of running work it has already abandoned:
	// an exporter that timed out retries the whole batch, and stale
	// attempts queued behind the engine would each run in full first.
	turn chan struct{}
}

// acquire waits for the engine's turn or for ctx to end; release must
// follow a nil error.
func (s *session) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.turn <- struct{}{}:
		if err := ctx.Err(); err != nil {
			s.release()
			return err
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *session) release() { <-s.turn }

// Engine is one reference to the process-wide chDB session.
type Engine struct {
	once sync.Once
	s    *session
}

// Open returns a reference to the embedded engine storing data in dir,
// creating the directory if needed. Every Open must be paired with Close.
func Open(dir string) (*Engine, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("chdb: data dir %q: %w", dir, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		if shared.dir != abs {
			return nil, fmt.Errorf("chdb: this process already holds %q; chDB allows one data directory per process", shared.dir)
		}
		shared.refs++
		return &Engine{s: shared}, nil
	}
	if err = os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("chdb: create data dir: %w", err)
	}
	c, err := connect(abs)
	if err != nil {
		return nil, err
	}
	shared = &session{dir: abs, refs: 1, c: c, turn: make(chan struct{}, 1)}
	return &Engine{s: shared}, nil
}

// Dir is the data directory of the session.
func (e *Engine) Dir() string { return e.s.dir }

// Exec implements storage.Engine.
func (e *Engine) Exec(ctx context.Context, query string) error {
	if err := e.s.acquire(ctx); err != nil {
		return err
	}
	defer e.s.release()
	if err := e.s.c.exec(query); err != nil {
		return fmt.Errorf("chdb: exec: %w", err)
	}
	return nil
}

// Insert implements storage.Engine.
func (e *Engine) Insert(ctx context.Context, query, format string, data ...[]byte) error {
	if err := e.s.acquire(ctx); err != nil {
		return err
	}
	defer e.s.release()
	if err := e.s.c.insert(query, format, data); err != nil {
		return fmt.Errorf("chdb: insert: %w", err)
	}
	return nil
}

// QueryJSON implements storage.Engine.
func (e *Engine) QueryJSON(ctx context.Context, query string, fn func([]byte) error) error {
	if err := e.s.acquire(ctx); err != nil {
		return err
	}
	defer e.s.release()
	var partial []byte // a row split across chunks
	err := e.s.c.stream(query, "JSONEachRow", func(buf []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(partial) > 0 {
			buf = append(partial, buf...)
			partial = nil
		}
		for len(buf) > 0 {
			i := bytes.IndexByte(buf, '\n')
			if i < 0 {
				partial = append([]byte(nil), buf...)
				return nil
			}
			if i > 0 {
				if err := fn(buf[:i]); err != nil {
					return err
				}
			}
			buf = buf[i+1:]
		}
		return nil
	})
	if err == nil && len(partial) > 0 {
		err = fn(partial)
	}
	switch {
	case errors.Is(err, storage.ErrStop):
		return nil
	case err != nil && ctx.Err() == nil:
		return fmt.Errorf("chdb: query: %w", err)
	}
	return err
}

// Close drops this reference; the session closes with the last one.
func (e *Engine) Close() error {
	e.once.Do(func() {
		mu.Lock()
		defer mu.Unlock()
		e.s.refs--
		if e.s.refs == 0 {
			e.s.turn <- struct{}{}
			e.s.c.close()
			e.s.release()
			shared = nil
		}
	})
	return nil
}

var _ storage.Engine = (*Engine)(nil)
