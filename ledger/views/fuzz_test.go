package views

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/ledger/storage"
)

// FuzzCheckQuery: Search accepts exactly the queries of the documented
// shape, refuses the rest with ErrInvalid and a message that does not repeat
// the query, and every accepted query binds into the search SQL as a value.
func FuzzCheckQuery(f *testing.F) {
	for _, s := range []string{"", "user-1", traceA, strings.ToUpper(traceA), "a\x00b", "\xff", "é", "'; DROP TABLE llm_calls; --", "{q:String}", strings.Repeat("x", MaxQueryLen)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		err := CheckQuery(q)
		valid := q != "" && len(q) <= MaxQueryLen && utf8.ValidString(q) && !strings.Contains(q, "\x00")
		if valid != (err == nil) {
			t.Fatalf("%q: valid %v, error %v", q, valid, err)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: %v does not wrap ErrInvalid", q, err)
			}
			if len(q) > 2 && strings.Contains(err.Error(), q) {
				t.Fatalf("the message repeats the query: %v", err)
			}
			return
		}
		// Bound once with q and once with a sentinel, the texts differ only
		// where the sentinel's literal stands: q became a literal, nothing else.
		withQ, err := bindSearch(q)
		if err != nil {
			t.Fatalf("%q: bind: %v", q, err)
		}
		withSentinel, err := bindSearch("SENTINEL")
		if err != nil {
			t.Fatal(err)
		}
		if strings.ReplaceAll(withSentinel, storage.Quote("SENTINEL"), storage.Quote(q)) != withQ {
			t.Fatalf("%q: not bound as a literal", q)
		}
	})
}

// bindSearch is the end-user search SQL for q.
func bindSearch(q string) (string, error) {
	return bind("views_search", Filter{Tenants: []string{"acme"}}, searchParams(search{q: q, userFrom: t0, userTo: t0.Add(time.Hour)}, 1))
}

// FuzzDecodeCursor: any token either is refused with ErrInvalid or decodes
// to a cursor that survives its own round trip.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(cursor{StartTime: t0, Tenant: "acme", TraceID: traceA, SpanID: "0000000000000a01"}.encode())
	f.Add(cursor{StartTime: minTime}.encode())
	for _, s := range []string{"", "AQ", "AQAAAA", "not a cursor!", "AP____________8B", strings.Repeat("A", 100)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := decodeCursor(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("%q: %v does not wrap ErrInvalid", s, err)
			}
			return
		}
		if c.StartTime.Before(minTime) || c.StartTime.After(maxTime) {
			t.Fatalf("%q: time %v outside the engine's range", s, c.StartTime)
		}
		again, err := decodeCursor(c.encode())
		if err != nil || again != c {
			t.Fatalf("%q: %+v round trips to %+v, %v", s, c, again, err)
		}
	})
}
