package storage

import (
	"strings"
	"testing"
	"time"
)

func TestBind(t *testing.T) {
	got, err := Bind("SELECT * FROM t WHERE a = {a:String} AND n = {n:UInt64} AND t > {t:DateTime64}", map[string]any{
		"a": "x'); DROP TABLE t; --\\\x00\n", "n": uint64(7), "t": time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT * FROM t WHERE a = 'x\'); DROP TABLE t; --\\\0\n' AND n = 7 AND t > toDateTime64('2026-01-02 03:04:05.000000006', 9, 'UTC')`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestBindErrors(t *testing.T) {
	cases := map[string]struct {
		q      string
		params map[string]any
	}{
		"missing value":   {"{a:String}", map[string]any{}},
		"unused value":    {"SELECT 1", map[string]any{"a": "x"}},
		"unused with dup": {"{a:String} {a:String}", map[string]any{"a": "x", "b": "y"}},
		"wrong type":      {"{a:UInt64}", map[string]any{"a": "7"}},
		"unknown type":    {"{a:Float32}", map[string]any{"a": 1.0}},
		"no type":         {"{a}", map[string]any{"a": "x"}},
		"no name":         {"{:String}", map[string]any{"": "x"}},
		"unterminated":    {"{a:String", map[string]any{"a": "x"}},
		"string for time": {"{a:DateTime64}", map[string]any{"a": "2026-01-01"}},
	}
	for name, tc := range cases {
		if _, err := Bind(tc.q, tc.params); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "'", `\`, "a\x00b", "\n\r", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		if !strings.HasPrefix(q, "'") || !strings.HasSuffix(q, "'") || len(q) < 2 {
			t.Fatalf("not a literal: %q", q)
		}
		// Every quote inside the literal is escaped: unescaping gives s back.
		inner := q[1 : len(q)-1]
		var b strings.Builder
		for i := 0; i < len(inner); i++ {
			c := inner[i]
			if c == '\'' {
				t.Fatalf("unescaped quote in %q", q)
			}
			if c == '\\' {
				i++
				switch inner[i] {
				case '0':
					b.WriteByte(0)
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				default:
					b.WriteByte(inner[i])
				}
				continue
			}
			b.WriteByte(c)
		}
		if b.String() != s {
			t.Fatalf("round trip: %q -> %q -> %q", s, q, b.String())
		}
	})
}
