package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Pathological inputs of about 1 MiB: each must come back bounded, valid and
// without a literal. A super-linear path would show up here as a test that
// does not finish; speed itself is measured in BenchmarkPathological.
var pathological = []struct {
	name    string
	d       Dialect
	in      string
	partial bool
}{
	{"deep parentheses", PostgreSQL, strings.Repeat("(", 1<<19) + "1" + strings.Repeat(")", 1<<19), false},
	{"deep nested comments", PostgreSQL, "SELECT " + strings.Repeat("/*", 1<<19) + "x" + strings.Repeat("*/", 1<<19) + " 1", false},
	{"unclosed nested comments", MSSQL, strings.Repeat("/*", 1<<19), true},
	{"at signs", MSSQL, strings.Repeat("@", 1<<20), false},
	{"percent parens", PostgreSQL, strings.Repeat("%(a", 1<<18), false},
	{"backslashes and quotes", MySQL, "'" + strings.Repeat(`\\\'`, 1<<18), true},
	{"doubled quotes", PostgreSQL, "'" + strings.Repeat("''", 1<<19) + "'", false},
	{"many empty strings", Generic, strings.Repeat("'' ", 1<<18), false},
	{"dollar tags never closed", PostgreSQL, strings.Repeat("$a", 1<<19), false},
	{"dollar quote never closed", PostgreSQL, "$q$" + strings.Repeat("x$", 1<<19), true},
	{"huge IN list", Generic, "SELECT 1 WHERE a IN (" + strings.Repeat("1234567, ", 1<<17) + "1)", false},
	{"sign runs", Generic, strings.Repeat("-+", 1<<19) + "1", false},
	{"q quotes", Oracle, strings.Repeat("q'[", 1<<18), true},
	{"redis long line", Redis, "SET k:v " + strings.Repeat("x ", 1<<19), false},
	{"redis quotes", Redis, "SET k:v " + strings.Repeat(`"\"" `, 1<<18), false},
	{"json nesting", MongoDB, strings.Repeat(`{"a":[`, 1<<17) + "1" + strings.Repeat("]}", 1<<17), false},
	{"regex never closed", MongoDB, `{a: /` + strings.Repeat("x", 1<<20), true},
}

func TestPathologicalInputs(t *testing.T) {
	for _, tc := range pathological {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range []Options{{MaxLength: 4 << 20}, {MaxLength: 4 << 20, CollapseLists: true, Summarize: true, KeepSQLCommenter: true}} {
				res := Sanitize(tc.in, tc.d, opts)
				if res.Partial != tc.partial {
					t.Errorf("partial = %v, want %v", res.Partial, tc.partial)
				}
				if len(res.Text) > len(tc.in)+2 || !utf8.ValidString(res.Text) {
					t.Errorf("output of %d bytes (input %d), valid UTF-8 %v", len(res.Text), len(tc.in), utf8.ValidString(res.Text))
				}
				if len(res.Summary) > MaxSummaryLength {
					t.Errorf("summary of %d bytes", len(res.Summary))
				}
			}
		})
	}
}

func TestCutAfterCredentialMask(t *testing.T) {
	res := Sanitize("CONNECT scott/"+strings.Repeat("x", 100), Oracle, Options{MaxLength: 20})
	if res.Text != "CONNECT ?" {
		t.Errorf("got %q", res.Text)
	}
}

func BenchmarkPathological(b *testing.B) {
	for _, tc := range pathological {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.in)))
			for b.Loop() {
				Sanitize(tc.in, tc.d, Options{MaxLength: 4 << 20})
			}
		})
	}
}
