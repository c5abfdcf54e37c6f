// Package storagetest is the engine conformance suite: what the ledger needs
// of a ClickHouse engine, checked the same way on every storage. Targets
// gives the engines of a test process: the embedded chDB engine; the server
// adapter (clickhouse) in front of that same engine, so the exact SQL text the
// adapter sends is executed; and a live ClickHouse server when
// DOCKET_TEST_CLICKHOUSE_DSN names one. ledgertest.Main opens the ledger of
// every storage test on one of them (DOCKET_TEST_ENGINE).
package storagetest

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/storage/chdb"
	"github.com/docketlabs/docket/ledger/storage/clickhouse"
	"github.com/docketlabs/docket/ledger/storage/clickhouse/clickhousetest"
)

// DSNEnv names a live ClickHouse server (its HTTP interface) to test
// against; AllowUnauthenticatedEnv=1 accepts one without a password.
const (
	DSNEnv                  = "DOCKET_TEST_CLICKHOUSE_DSN"
	AllowUnauthenticatedEnv = "DOCKET_TEST_CLICKHOUSE_ALLOW_UNAUTHENTICATED"
)

// EngineEnv chooses the engine of ledgertest.Main: "embedded" (default),
// "chserver" (the server adapter over the chDB engine) or "server" (the
// live server named by DSNEnv).
const EngineEnv = "DOCKET_TEST_ENGINE"

// Open returns the engine EngineEnv chooses, given the process's chDB
// engine, and a function that closes what it opened besides embedded.
func Open(ctx context.Context, embedded storage.Engine) (storage.Engine, func(), error) {
	switch os.Getenv(EngineEnv) {
	case "", "embedded":
		return embedded, func() {}, nil
	case "chserver":
		a, front, err := OverChDB(ctx, embedded)
		if err != nil {
			return nil, nil, err
		}
		return a, func() { _ = a.Close(); front.Close() }, nil
	case "server":
		srv, err := OpenServer(ctx)
		if err != nil || srv == nil {
			return nil, nil, fmt.Errorf("storagetest: %s=server needs %s: %w", EngineEnv, DSNEnv, err)
		}
		return srv, func() { _ = srv.Close() }, nil
	}
	return nil, nil, fmt.Errorf("storagetest: %s=%q, want embedded, chserver or server", EngineEnv, os.Getenv(EngineEnv))
}

// Target is one engine under test.
type Target struct {
	Name   string
	Engine storage.Engine
	// Front is the HTTP front of the chDB engine for the adapter target,
	// nil otherwise: its Requests are the SQL the adapter sent.
	Front *clickhousetest.Server
}

// OpenServer opens the live server named by DSNEnv, or returns nil when
// none is named.
func OpenServer(ctx context.Context) (storage.Engine, error) {
	dsn := os.Getenv(DSNEnv)
	if dsn == "" {
		return nil, nil
	}
	return clickhouse.Open(ctx, dsn, clickhouse.Options{AllowUnauthenticated: os.Getenv(AllowUnauthenticatedEnv) == "1"})
}

// OverChDB opens the server adapter against an HTTP front of eng.
func OverChDB(ctx context.Context, eng storage.Engine) (*clickhouse.Engine, *clickhousetest.Server, error) {
	front := clickhousetest.New(eng)
	a, err := clickhouse.Open(ctx, front.DSN, clickhouse.Options{})
	if err != nil {
		front.Close()
		return nil, nil, err
	}
	return a, front, nil
}

// Targets returns every engine this process can test on, closed with the
// test: embedded, chserver over embedded, and the live server if one is named.
func Targets(t testing.TB, embedded *chdb.Engine) []Target {
	t.Helper()
	ctx := context.Background()
	out := []Target{{Name: "embedded", Engine: embedded}}
	a, front, err := OverChDB(ctx, embedded)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(); front.Close() })
	out = append(out, Target{Name: "chserver-over-embedded", Engine: a, Front: front})
	srv, err := OpenServer(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if srv != nil {
		t.Cleanup(func() { _ = srv.Close() })
		out = append(out, Target{Name: "server", Engine: srv})
	}
	return out
}

// Run checks eng against the contract. Names it creates are unique per
// call, so several targets may share one database.
func Run(t *testing.T, eng storage.Engine) {
	t.Run("contract", func(t *testing.T) { contract(t, eng) })
	t.Run("settings", func(t *testing.T) { settings(t, eng) })
	t.Run("store", func(t *testing.T) { store(t, eng) })
}

func unique() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func exec(t *testing.T, eng storage.Engine, q string) {
	t.Helper()
	if err := eng.Exec(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func rows(t *testing.T, eng storage.Engine, q string) []string {
	t.Helper()
	var out []string
	if err := eng.QueryJSON(context.Background(), q, func(row []byte) error { out = append(out, string(row)); return nil }); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

func contract(t *testing.T, eng storage.Engine) {
	ctx := context.Background()
	table := "conformance_" + unique()
	exec(t, eng, "CREATE TABLE "+table+" (k String, n Nullable(Int64), s String) ENGINE = MergeTree ORDER BY k")
	defer func() { _ = eng.Exec(ctx, "DROP TABLE IF EXISTS "+table) }()

	// JSON rows in chunks, empty chunks skipped.
	if err := eng.Insert(ctx, "INSERT INTO "+table, "JSONEachRow", []byte(`{"k":"a","n":null,"s":"x"}`+"\n"), nil, []byte(`{"k":"b","n":2,"s":"y"}`+"\n")); err != nil {
		t.Fatal(err)
	}
	// Binary rows are not text: an empty line, a NUL and a FORMAT inside a
	// value arrive as they are.
	odd := "line\n\nFORMAT JSONEachRow\x00'\""
	var bin [][]byte
	for _, r := range []struct {
		k string
		n int64
		s string
	}{{"c", 3, odd}, {"d", -4, strings.Repeat("z", 200<<10)}} {
		row := appendString(nil, r.k)
		row = append(row, 0) // not NULL
		row = binary.LittleEndian.AppendUint64(row, uint64(r.n))
		bin = append(bin, appendString(row, r.s))
	}
	if err := eng.Insert(ctx, "INSERT INTO "+table, "RowBinary", bin...); err != nil {
		t.Fatal(err)
	}
	if err := eng.Insert(ctx, "INSERT INTO "+table, "JSONEachRow", nil); err == nil {
		t.Fatal("an insert of no rows was accepted")
	}

	got := rows(t, eng, "SELECT k, n, s FROM "+table+" ORDER BY k")
	if len(got) != 4 || got[0] != `{"k":"a","n":null,"s":"x"}` || got[1] != `{"k":"b","n":2,"s":"y"}` {
		t.Fatalf("rows %.200q", got)
	}
	var c struct {
		K string
		N int64
		S string
	}
	if err := json.Unmarshal([]byte(got[2]), &c); err != nil || c.S != odd || c.N != 3 {
		t.Fatalf("binary row: %+v %v", c, err)
	}
	if err := json.Unmarshal([]byte(got[3]), &c); err != nil || len(c.S) != 200<<10 || c.N != -4 {
		t.Fatalf("long row: %d bytes, n=%d, %v", len(c.S), c.N, err)
	}

	var n int
	if err := eng.QueryJSON(ctx, "SELECT number FROM numbers(100000)", func([]byte) error { n++; return storage.ErrStop }); err != nil || n != 1 {
		t.Fatalf("ErrStop: %v after %d rows", err, n)
	}
	n = 0
	if err := eng.QueryJSON(ctx, "SELECT number FROM numbers(300000)", func([]byte) error { n++; return nil }); err != nil || n != 300000 {
		t.Fatalf("streamed %d rows, %v", n, err)
	}

	// Errors reach logs: quoted literals are masked.
	err := eng.QueryJSON(ctx, "SELECT nosuchcol FROM "+table+" WHERE s = 'alice@example.com'", func([]byte) error { return nil })
	if err == nil || strings.Contains(err.Error(), "alice") || !strings.Contains(err.Error(), "nosuchcol") {
		t.Fatalf("query error: %v", err)
	}
	err = eng.Insert(ctx, "INSERT INTO "+table, "JSONEachRow", []byte(`{"k":1,"n":"secret-row-value"}`+"\n"))
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("insert error: %v", err)
	}
	// An error after rows were sent is an error, never a short result.
	n = 0
	err = eng.QueryJSON(ctx, "SELECT number, throwIf(number = 250000) AS x FROM numbers(300000) SETTINGS max_block_size = 1000", func([]byte) error { n++; return nil })
	if err == nil || n == 0 {
		t.Fatalf("%d rows, then %v: want an error after the first rows", n, err)
	}
}

// settings: a query's trailing SETTINGS apply to that query, and so to
// the rows it prints.
func settings(t *testing.T, eng storage.Engine) {
	got := rows(t, eng, "SELECT toDateTime64('2026-11-29 12:00:00.123456789', 9, 'UTC') AS t, toUInt64(18446744073709551615) AS u, toDecimal64(1.5, 12) AS d "+
		"SETTINGS date_time_output_format = 'iso', output_format_json_quote_64bit_integers = 0, output_format_decimal_trailing_zeros = 0")
	want := `{"t":"2026-11-29T12:00:00.123456789Z","u":18446744073709551615,"d":1.5}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("got %q, want %s", got, want)
	}
}

// store: the ledger's own reads and writes, times included.
func store(t *testing.T, eng storage.Engine) {
	ctx := context.Background()
	s := ledgerstore.New(eng)
	for range 2 {
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 123456789, time.UTC)
	trace := unique()
	tokens, cost := int64(42), "0.000123"
	call := func(span, model string, ingested time.Time) ledger.Call {
		return ledger.Call{Tenant: "conformance", TraceID: trace, SpanID: span, ServiceName: "chat-api",
			StartTime: at, EndTime: at.Add(1500 * time.Millisecond), DurationMS: 1500, ResponseModel: model, EndUserRef: "u-1",
			InputTokens: &tokens, FinishReasons: []string{"stop"}, StopSequences: []string{}, RequestParams: map[string]string{"a": "1"},
			AttributeIssues: []string{}, IngestedAt: ingested, CostUSD: &cost,
			EvidenceSpanIDs: []string{}, MemberRefs: []string{}}
	}
	orig := []ledger.Call{call("00000000000000a1", "gpt-4o", at.Truncate(time.Millisecond)), call("00000000000000a2", "gpt-4o", at.Truncate(time.Millisecond))}
	if err := s.InsertCalls(ctx, orig); err != nil {
		t.Fatal(err)
	}
	forged := call("00000000000000a1", "forged", at.Add(time.Minute).Truncate(time.Millisecond))
	forged.ServiceName = "intruder"
	if err := s.InsertCalls(ctx, []ledger.Call{forged, orig[1]}); err != nil {
		t.Fatal(err)
	}
	got, err := s.CallsByTrace(ctx, trace)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, orig) {
		t.Fatalf("calls\n got %+v\nwant %+v", got, orig)
	}
	conflicts, err := s.ConflictsByTrace(ctx, trace)
	if err != nil || len(conflicts) != 1 || conflicts[0].ConflictingService != "intruder" || !conflicts[0].ReceivedAt.Equal(forged.IngestedAt) {
		t.Fatalf("conflicts %+v %v", conflicts, err)
	}
	span := ledger.EvidenceSpan{Tenant: "conformance", TraceID: trace, SpanID: "00000000000000b1", Category: "db", StartTime: at, EndTime: at,
		Documents: []ledger.Document{}, ContentRefs: []string{"r"}, AttributeIssues: []string{}, IngestedAt: at.Truncate(time.Millisecond)}
	if err = s.InsertEvidence(ctx, []ledger.EvidenceSpan{span}); err != nil {
		t.Fatal(err)
	}
	spans, err := s.EvidenceByTrace(ctx, trace)
	if err != nil || len(spans) != 1 || !spans[0].StartTime.Equal(at) {
		t.Fatalf("evidence %+v %v", spans, err)
	}
	entry := ledgerstore.AccessEntry{EventID: unique(), At: at.Truncate(time.Millisecond), Actor: "auditor", Role: "audit", Action: "reveal", Tenant: "conformance-" + trace,
		TraceID: trace, Ref: "r", Reason: "complaint", Outcome: "allowed", Detail: "ok"}
	if err = s.InsertAccess(ctx, entry); err != nil {
		t.Fatal(err)
	}
	log, err := s.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: entry.Tenant})
	if err != nil || len(log) != 1 || !reflect.DeepEqual(log[0], entry) {
		t.Fatalf("access log %+v %v", log, err)
	}
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}
