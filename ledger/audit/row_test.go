package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/queries"
)

var store *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }

// engineRows returns the canonical rows of a SELECT, as the engine writes
// them under the audit settings.
func engineRows(t testing.TB, q string) [][]byte {
	t.Helper()
	var rows [][]byte
	err := store.Engine().QueryJSON(context.Background(), q+"\n"+queries.MustGet("audit_settings"), func(row []byte) error {
		rows = append(rows, bytes.Clone(row))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// trickyStrings are values whose escaping must match the engine's.
func trickyStrings() [][]byte {
	var out [][]byte
	for c := 0; c < 256; c++ {
		out = append(out, []byte{'a', byte(c), 'z'})
	}
	for _, s := range []string{"", "\u2028\u2029", "x\u2028", "\xe2\x80", "\xe2\x80\xa8\xe2", "é 😀 中文", `"quoted", comma`, "line\r\nbreak\n", `back\slash/`, "\xff\xfe invalid", "\\u0041", "tab\tform\f"} {
		out = append(out, []byte(s))
	}
	return out
}

func TestQuotingMatchesEngine(t *testing.T) {
	for _, s := range trickyStrings() {
		rows := engineRows(t, "SELECT unhex('"+hex.EncodeToString(s)+"') AS s")
		want := rows[0][len(`{"s":`) : len(rows[0])-1]
		if got := appendQuoted(nil, s); !bytes.Equal(got, want) {
			t.Errorf("%q: quoted %q, engine writes %q", s, got, want)
		}
		back, err := appendUnquoted(nil, want)
		if err != nil || !bytes.Equal(back, s) {
			t.Errorf("%q: unquoting the engine's %q gives %q, %v", s, want, back, err)
		}
	}
}

func TestUnquoteRejectsBadStrings(t *testing.T) {
	for _, q := range []string{`"`, `"\"`, `"a"b"`, `"\x"`, `"\u12"`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `abc`} {
		if got, err := appendUnquoted(nil, []byte(q)); err == nil {
			t.Errorf("%s: accepted as %q", q, got)
		}
	}
	if got, err := appendUnquoted(nil, []byte(`"\ud83d\ude00\/"`)); err != nil || string(got) != "😀/" {
		t.Errorf("surrogate pair: %q, %v", got, err)
	}
}

func TestEachField(t *testing.T) {
	row := []byte(`{"a":"x,\"}","b":[1,{"c":"]"}],"d":null,"e":-1.5e-7,"f":{}}`)
	var keys, values []string
	err := eachField(row, func(k, v []byte) error {
		keys, values = append(keys, string(k)), append(values, string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(keys, " ") != `"a" "b" "d" "e" "f"` || strings.Join(values, " ") != `"x,\"}" [1,{"c":"]"}] null -1.5e-7 {}` {
		t.Fatalf("keys %q values %q", keys, values)
	}
	for _, bad := range []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":1 }`, `{"a":"x}`, `{"a":[1}`, `[1]`, `{"a":1}x`, `{a:1}`} {
		if err := eachField([]byte(bad), func(k, v []byte) error { return nil }); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// tricky is a SELECT whose one row has every type an export writes, with
// values that are hard to carry through CSV and Parquet.
const tricky = `SELECT
	'ten"ant,\n' AS s,
	CAST(NULL AS Nullable(String)) AS null_s,
	CAST('' AS Nullable(String)) AS empty_s,
	toLowCardinality('lc\r\n') AS lc,
	unhex('01ff2f5c22e280a8') AS raw,
	toDateTime64('2026-03-01 12:34:56.123456789', 9, 'UTC') AS t9,
	toDateTime64('1900-01-01 00:00:00', 3, 'UTC') AS t3,
	CAST(NULL AS Nullable(DateTime64(9, 'UTC'))) AS null_t,
	toFloat64(0.1) AS f,
	CAST(nan AS Nullable(Float64)) AS nan_f,
	toFloat64(1e-300) AS tiny,
	toInt64(-9223372036854775808) AS i64,
	toUInt64(18446744073709551615) AS u64,
	CAST(NULL AS Nullable(Int64)) AS null_i,
	CAST(404 AS Nullable(UInt16)) AS u16,
	true AS b,
	['', 'a,b', '"', 'x\ny'] AS arr,
	CAST([] AS Array(String)) AS empty_arr,
	map('k\n', 'v,"', '', '') AS m,
	toString(toDecimal64('0.000250000000', 12)) AS cost`

func TestCSVRoundTripMatchesEngine(t *testing.T) {
	rows := engineRows(t, tricky+" UNION ALL "+strings.Replace(tricky, `'ten"ant,\n'`, `''`, 1))
	cols, err := columnsOf(context.Background(), store.Engine(), tricky)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newLayout(cols)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := &csvWriter{w: bufio.NewWriter(&buf), l: l}
	if err := w.header(cols); err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if err := w.row(row); err != nil {
			t.Fatalf("%s: %v", row, err)
		}
	}
	_ = w.w.Flush()
	r := newCSVReader(bytes.NewReader(buf.Bytes()), MaxRowBytes)
	if err := r.next(); err != nil || len(r.fields) != len(cols) {
		t.Fatalf("header: %v %q", err, r.fields)
	}
	for i, row := range rows {
		if err := r.next(); err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
		got, err := l.canonical(nil, r.fields, r.quoted)
		if err != nil || !bytes.Equal(got, row) {
			t.Fatalf("record %d:\n got %s (%v)\nwant %s", i+1, got, err, row)
		}
	}
}

func TestCSVReaderRejectsMalformed(t *testing.T) {
	for _, in := range []string{"\"abc", "a\"b\r\n", "\"a\"b\r\n", "a\rb\n"} {
		r := newCSVReader(strings.NewReader(in), 1<<10)
		if err := r.next(); err == nil {
			t.Errorf("%q accepted as %q", in, r.fields)
		}
	}
	r := newCSVReader(strings.NewReader("\""+strings.Repeat("x", 100)), 64)
	if err := r.next(); !errors.Is(err, errCSVTooLong) {
		t.Errorf("overlong record: %v", err)
	}
	r = newCSVReader(strings.NewReader("a,,\"\",\"x\"\"y\"\nlast,"), 64)
	if err := r.next(); err != nil || len(r.fields) != 4 || string(r.fields[3]) != `x"y` || r.quoted[1] || !r.quoted[2] {
		t.Fatalf("record 1: %v %q %v", err, r.fields, r.quoted)
	}
	if err := r.next(); err != nil || len(r.fields) != 2 || string(r.fields[0]) != "last" {
		t.Fatalf("record 2: %v %q", err, r.fields)
	}
}

func TestTextualTypes(t *testing.T) {
	for typ, want := range map[string]bool{"String": true, "LowCardinality(String)": true, "Nullable(String)": true, "DateTime64(9, 'UTC')": true,
		"Nullable(DateTime64(9, 'UTC'))": true, "Int64": false, "Nullable(UInt16)": false, "Map(String, String)": false, "Array(String)": false, "Bool": false} {
		if got, err := textual(typ); err != nil || got != want {
			t.Errorf("%s: %v, %v; want %v", typ, got, err, want)
		}
	}
	for _, typ := range []string{"", "Array(String) DEFAULT splitByChar(',', 'a')", "String DEFAULT 'x'", "Object('json')", "String`", "Strin g", " String"} {
		if _, err := textual(typ); err == nil {
			t.Errorf("%q accepted", typ)
		}
	}
}

// TestCSVNeutralisesFormulas: a string cell a spreadsheet would run as a
// formula (= + - @, or a tab or CR first) is written with an apostrophe in
// front, as is one that starts with an apostrophe; numbers never are; and
// every cell still maps back to the engine's canonical row.
func TestCSVNeutralisesFormulas(t *testing.T) {
	cases := []struct {
		value, cell string
	}{
		{"=1+1", "'=1+1"},
		{`=HYPERLINK("http://x","y")`, `'=HYPERLINK("http://x","y")`},
		{"+SUM(A1:A9)", "'+SUM(A1:A9)"},
		{"-2+3", "'-2+3"},
		{"@cmd", "'@cmd"},
		{"\t=1+1", "'\t=1+1"},
		{"\r=1+1", "'\r=1+1"},
		{"'quoted", "''quoted"},
		{"'", "''"},
		{"plain", "plain"},
		{"a=b", "a=b"},
		{"", ""},
	}
	values := make([]string, len(cases))
	for i, c := range cases {
		values[i] = "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, "\t", `\t`, "\r", `\r`).Replace(c.value) + "'"
	}
	q := "SELECT s, toInt64(-5) AS n, [s] AS arr FROM (SELECT arrayJoin([" + strings.Join(values, ", ") + "]) AS s)"
	rows := engineRows(t, q)
	cols, err := columnsOf(context.Background(), store.Engine(), q)
	if err != nil {
		t.Fatal(err)
	}
	l, err := newLayout(cols)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := &csvWriter{w: bufio.NewWriter(&buf), l: l}
	for _, row := range rows {
		if err := w.row(row); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.w.Flush()
	r := newCSVReader(bytes.NewReader(buf.Bytes()), MaxRowBytes)
	for i, c := range cases {
		if err := r.next(); err != nil {
			t.Fatalf("record %d: %v", i+1, err)
		}
		if string(r.fields[0]) != c.cell {
			t.Errorf("%q: cell %q, want %q", c.value, r.fields[0], c.cell)
		}
		if string(r.fields[1]) != "-5" || r.quoted[1] {
			t.Errorf("%q: the number was written %q (quoted %v)", c.value, r.fields[1], r.quoted[1])
		}
		got, err := l.canonical(nil, r.fields, r.quoted)
		if err != nil || !bytes.Equal(got, rows[i]) {
			t.Errorf("%q: reads back as %s (%v), want %s", c.value, got, err, rows[i])
		}
	}
}
