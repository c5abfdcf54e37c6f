package chdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/docketlabs/docket/ledger/storage"
)

// The binding to libchdb's C API is loaded on first use, not at program
// start: the docket binary must run against a ClickHouse server on machines
// without libchdb, and a missing library must be an error, not a crash.

type chdbConnection struct{ internal unsafe.Pointer }
type chdbResult struct{ internal unsafe.Pointer }

var lib struct {
	once sync.Once
	err  error

	connect       func(argc int, argv []*byte) *chdbConnection
	closeConn     func(conn *chdbConnection)
	queryN        func(conn unsafe.Pointer, query *byte, queryLen uintptr, format *byte, formatLen uintptr) *chdbResult
	streamQuery   func(conn unsafe.Pointer, query string, format string) *chdbResult
	streamFetch   func(conn unsafe.Pointer, result *chdbResult) *chdbResult
	streamCancel  func(conn unsafe.Pointer, result *chdbResult)
	destroyResult func(result *chdbResult)
	resultBuffer  func(result *chdbResult) *byte
	resultLen     func(result *chdbResult) uint
	resultError   func(result *chdbResult) string

	insertN       func(conn unsafe.Pointer, query *byte, queryLen uintptr, format *byte, formatLen uintptr) unsafe.Pointer
	insertAppend  func(stream unsafe.Pointer, data *byte, n uintptr) int32
	insertDone    func(stream unsafe.Pointer) *chdbResult
	insertError   func(stream unsafe.Pointer) string
	insertCancel  func(stream unsafe.Pointer)
	insertDestroy func(stream unsafe.Pointer)
}

// LibraryPath is where libchdb is looked for: CHDB_LIB_PATH, else where
// `make deps` installs it in a checkout (.cache/chdb, relative to the working
// directory), else the conventional system location.
func LibraryPath() string {
	if p := os.Getenv("CHDB_LIB_PATH"); p != "" {
		return p
	}
	local := filepath.Join(".cache", "chdb", "libchdb.so")
	if _, err := os.Stat(local); err == nil {
		if abs, err := filepath.Abs(local); err == nil {
			return abs
		}
	}
	return "/usr/local/lib/libchdb.so"
}

func loadLibrary() error {
	lib.once.Do(func() {
		path := LibraryPath()
		if _, err := os.Stat(path); err != nil {
			lib.err = fmt.Errorf("chdb: libchdb not found at %q (set CHDB_LIB_PATH; `make deps` installs it): %w", path, err)
			return
		}
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			lib.err = fmt.Errorf("chdb: load %q: %w", path, err)
			return
		}
		defer func() {
			// RegisterLibFunc panics on a missing symbol (an incompatible
			// libchdb version).
			if r := recover(); r != nil {
				lib.err = fmt.Errorf("chdb: %q lacks the chdb C API: %v", path, r)
			}
		}()
		purego.RegisterLibFunc(&lib.connect, h, "chdb_connect")
		purego.RegisterLibFunc(&lib.closeConn, h, "chdb_close_conn")
		purego.RegisterLibFunc(&lib.queryN, h, "chdb_query_n")
		purego.RegisterLibFunc(&lib.streamQuery, h, "chdb_stream_query")
		purego.RegisterLibFunc(&lib.streamFetch, h, "chdb_stream_fetch_result")
		purego.RegisterLibFunc(&lib.streamCancel, h, "chdb_stream_cancel_query")
		purego.RegisterLibFunc(&lib.destroyResult, h, "chdb_destroy_query_result")
		purego.RegisterLibFunc(&lib.resultBuffer, h, "chdb_result_buffer")
		purego.RegisterLibFunc(&lib.resultLen, h, "chdb_result_length")
		purego.RegisterLibFunc(&lib.resultError, h, "chdb_result_error")
		purego.RegisterLibFunc(&lib.insertN, h, "chdb_stream_insert_n")
		purego.RegisterLibFunc(&lib.insertAppend, h, "chdb_stream_append")
		purego.RegisterLibFunc(&lib.insertDone, h, "chdb_stream_done")
		purego.RegisterLibFunc(&lib.insertError, h, "chdb_stream_insert_error")
		purego.RegisterLibFunc(&lib.insertCancel, h, "chdb_stream_cancel_insert")
		purego.RegisterLibFunc(&lib.insertDestroy, h, "chdb_destroy_insert_stream")
	})
	return lib.err
}

// conn is one chDB connection (the library allows one per process).
type conn struct{ c *chdbConnection }

func connect(dir string) (*conn, error) {
	if err := loadLibrary(); err != nil {
		return nil, err
	}
	args := []string{"clickhouse", "--path=" + dir}
	argv := make([]*byte, len(args))
	for i, a := range args {
		b := append([]byte(a), 0)
		argv[i] = &b[0]
	}
	c := lib.connect(len(argv), argv)
	if c == nil {
		return nil, connectError(dir)
	}
	return &conn{c: c}, nil
}

func (c *conn) close() { lib.closeConn(c.c) }

var nullFormat = []byte("Null")

// exec runs a statement and discards its output. The statement goes to the
// library by pointer and length, without a NUL-terminated copy.
// libError is an error the library reported, scrubbed of the query text
// and row values it quotes (storage.Scrub): errors end up in logs.
func libError(msg string) error { return errors.New(storage.Scrub(msg)) }

func (c *conn) exec(query string) error {
	if query == "" {
		return errors.New("chdb: empty statement")
	}
	r := lib.queryN(c.c.internal, unsafe.StringData(query), uintptr(len(query)), &nullFormat[0], uintptr(len(nullFormat)))
	if r == nil {
		return errors.New("chdb: query returned no result")
	}
	defer lib.destroyResult(r)
	if msg := lib.resultError(r); msg != "" {
		return libError(msg)
	}
	return nil
}

// insert streams rows into an INSERT statement through the library's
// streaming-insert API. Rows inline in the query text are not binary-safe
// there: an empty line ("\n\n") ends inline data.
func (c *conn) insert(query, format string, data [][]byte) error {
	empty := true
	for _, chunk := range data {
		empty = empty && len(chunk) == 0
	}
	if query == "" || format == "" || empty {
		return errors.New("chdb: insert needs a statement, a format and rows")
	}
	s := lib.insertN(c.c.internal, unsafe.StringData(query), uintptr(len(query)), unsafe.StringData(format), uintptr(len(format)))
	if s == nil {
		return errors.New("chdb: insert stream not created")
	}
	defer lib.insertDestroy(s)
	if msg := lib.insertError(s); msg != "" {
		return libError(msg)
	}
	for _, chunk := range data {
		if len(chunk) == 0 {
			continue
		}
		if lib.insertAppend(s, &chunk[0], uintptr(len(chunk))) != 0 {
			msg := lib.insertError(s)
			lib.insertCancel(s)
			return fmt.Errorf("append rows: %w", libError(msg))
		}
	}
	r := lib.insertDone(s)
	if r == nil {
		return errors.New("chdb: insert returned no result")
	}
	defer lib.destroyResult(r)
	if msg := lib.resultError(r); msg != "" {
		return libError(msg)
	}
	return nil
}

// stream runs a query and calls fn with each output chunk in format.
func (c *conn) stream(query, format string, fn func(chunk []byte) error) error {
	s := lib.streamQuery(c.c.internal, query, format)
	if s == nil {
		return errors.New("chdb: stream query returned no result")
	}
	done := false
	defer func() {
		if !done {
			lib.streamCancel(c.c.internal, s)
		}
		lib.destroyResult(s)
	}()
	if msg := lib.resultError(s); msg != "" {
		return libError(msg)
	}
	for {
		chunk := lib.streamFetch(c.c.internal, s)
		if chunk == nil {
			done = true
			return nil
		}
		if msg := lib.resultError(chunk); msg != "" {
			lib.destroyResult(chunk)
			return libError(msg)
		}
		n := int(lib.resultLen(chunk))
		if n == 0 {
			lib.destroyResult(chunk)
			done = true
			return nil
		}
		err := fn(unsafe.Slice(lib.resultBuffer(chunk), n))
		lib.destroyResult(chunk)
		if err != nil {
			return err
		}
	}
}
