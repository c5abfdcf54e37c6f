package chdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/shorttest"
)

func TestMain(m *testing.M) {
	if shorttest.SkipPackage(shorttest.ChDB) {
		os.Exit(0)
	}
	if err := loadLibrary(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func TestExecQueryAndSharing(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	e, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	if _, err := Open(t.TempDir()); err == nil || !strings.Contains(err.Error(), "one data directory per process") {
		t.Fatalf("second directory: got %v, want refusal", err)
	}
	e2, err := Open(dir)
	if err != nil {
		t.Fatalf("second reference to the same dir: %v", err)
	}

	if err := e.Exec(ctx, "CREATE TABLE t (k String, n Nullable(Int64)) ENGINE = MergeTree ORDER BY k"); err != nil {
		t.Fatal(err)
	}
	// Enough rows that the result arrives in several chunks.
	if err := e.Exec(ctx, "INSERT INTO t SELECT concat('key-', toString(number)), if(number % 2 = 0, NULL, number) FROM numbers(200000)"); err != nil {
		t.Fatal(err)
	}
	if err := e2.Close(); err != nil {
		t.Fatal(err)
	}
	var n, nulls int
	err = e.QueryJSON(ctx, "SELECT k, n FROM t ORDER BY k", func(row []byte) error {
		var r struct {
			K string
			N *int64
		}
		if err := json.Unmarshal(row, &r); err != nil {
			return fmt.Errorf("row %d %q: %w", n, row, err)
		}
		if !strings.HasPrefix(r.K, "key-") {
			return fmt.Errorf("row %d: bad key %q", n, r.K)
		}
		if r.N == nil {
			nulls++
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 200000 || nulls != 100000 {
		t.Fatalf("got %d rows, %d nulls; want 200000, 100000", n, nulls)
	}

	// Rows given in chunks arrive as one insert, in order; empty chunks
	// are skipped.
	if err := e.Exec(ctx, "CREATE TABLE chunks (i UInt32, s String) ENGINE = MergeTree ORDER BY i"); err != nil {
		t.Fatal(err)
	}
	var want []string
	var chunks [][]byte
	for c := range 3 {
		var chunk []byte
		for i := c * 1000; i < (c+1)*1000; i++ {
			chunk = fmt.Appendf(chunk, "{\"i\":%d,\"s\":\"row %d\"}\n", i, i)
			want = append(want, fmt.Sprintf(`{"i":%d,"s":"row %d"}`, i, i))
		}
		chunks = append(chunks, chunk, nil)
	}
	if err := e.Insert(ctx, "INSERT INTO chunks", "JSONEachRow", chunks...); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := e.QueryJSON(ctx, "SELECT i, s FROM chunks ORDER BY i", func(row []byte) error { got = append(got, string(row)); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("chunked insert: %d rows back of %d", len(got), len(want))
	}
	if err := e.Insert(ctx, "INSERT INTO chunks", "JSONEachRow", nil, nil); err == nil {
		t.Fatal("an insert of no rows was accepted")
	}

	// Errors reach logs: the engine quotes the query's literals and the
	// input it could not parse, and neither may appear in them.
	err = e.QueryJSON(ctx, "SELECT nosuchcol FROM chunks WHERE s = 'alice@example.com'", func([]byte) error { return nil })
	if err == nil || strings.Contains(err.Error(), "alice") || !strings.Contains(err.Error(), "nosuchcol") {
		t.Fatalf("query error: %v", err)
	}
	err = e.Insert(ctx, "INSERT INTO chunks", "JSONEachRow", []byte(`{"i":"secret-row-value","s":"x"}`+"\n"))
	if err == nil || strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "CANNOT_PARSE") {
		t.Fatalf("insert error: %v", err)
	}

	if err := e.Exec(ctx, "SELECT * FROM no_such_table"); err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Fatalf("bad query: got %v", err)
	}
	var first int
	err = e.QueryJSON(ctx, "SELECT number FROM numbers(10)", func([]byte) error { first++; return errStopForTest })
	if err == nil || first != 1 {
		t.Fatalf("callback error: got %v after %d rows", err, first)
	}
}

var errStopForTest = fmt.Errorf("stop")

// TestAbandonedWorkIsNotRun: a write whose deadline passes while another
// query holds the engine returns with its deadline and is never run; an
// exporter that timed out retries the whole batch, so running the stale
// attempt too would only add work behind a busy engine.
func TestAbandonedWorkIsNotRun(t *testing.T) {
	e, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	if err = e.Exec(ctx, "CREATE TABLE w (i UInt8) ENGINE = MergeTree ORDER BY i"); err != nil {
		t.Fatal(err)
	}
	busy := make(chan error, 1)
	go func() { busy <- e.Exec(ctx, "SELECT sleepEachRow(0.5) FROM numbers(4) FORMAT Null") }()
	for len(e.s.turn) == 0 { // until the slow query holds the engine
		time.Sleep(time.Millisecond)
	}
	late, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err = e.Insert(late, "INSERT INTO w", "JSONEachRow", []byte(`{"i":1}`+"\n")); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("insert behind a 2 s query with a 200 ms deadline: %v, want the deadline", err)
	}
	if err = <-busy; err != nil {
		t.Fatal(err)
	}
	var rows []string
	if err = e.QueryJSON(ctx, "SELECT i FROM w", func(row []byte) error { rows = append(rows, string(row)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 0 {
		t.Fatalf("the abandoned insert ran after its deadline: rows %v", rows)
	}
}
