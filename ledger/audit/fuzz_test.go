package audit

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/docketlabs/docket/ledger/decimal"
)

// FuzzCSVReader: any input ends in records or an error, never a panic or
// unbounded memory; a record written back with the same quoting reads back
// the same; and it maps to a canonical row exactly when it has the
// layout's number of fields.
func FuzzCSVReader(f *testing.F) {
	for _, s := range []string{"a,b\r\n", "\"x\"\"y\",,\"\"\n", "\"open", "a\"b", "1,\"[\"\"a\"\"]\",\r\n\r\n", "\"a\"b,c", "x\ry"} {
		f.Add([]byte(s))
	}
	l, err := newLayout([]Column{{"s", "Nullable(String)"}, {"n", "Int64"}, {"a", "Array(String)"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := newCSVReader(bytes.NewReader(in), 1<<12)
		for records := 0; records < 100; records++ {
			err := r.next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				if !errors.Is(err, errCSVQuote) && !errors.Is(err, errCSVTooLong) {
					t.Fatalf("unexpected error kind: %v", err)
				}
				return
			}
			var out bytes.Buffer
			w := &csvWriter{w: bufio.NewWriter(&out)}
			for i, field := range r.fields {
				if i > 0 {
					w.w.WriteByte(',')
				}
				if r.quoted[i] {
					w.writeQuoted(field, false)
				} else {
					w.w.Write(field)
				}
			}
			w.w.WriteString("\r\n")
			_ = w.w.Flush()
			again := newCSVReader(&out, 1<<12)
			if err := again.next(); err != nil || len(again.fields) != len(r.fields) {
				t.Fatalf("record %q %v does not read back: %v %q", r.fields, r.quoted, err, again.fields)
			}
			for i := range r.fields {
				if !bytes.Equal(again.fields[i], r.fields[i]) || again.quoted[i] != r.quoted[i] {
					t.Fatalf("field %d: %q %v read back as %q %v", i, r.fields[i], r.quoted[i], again.fields[i], again.quoted[i])
				}
			}
			if _, err := l.canonical(nil, r.fields, r.quoted); (err == nil) != (len(r.fields) == 3) {
				t.Fatalf("%d fields for three columns: %v", len(r.fields), err)
			}
		}
	})
}

// FuzzRowText: quoting round-trips every byte string, and the row and
// string parsers survive any input.
func FuzzRowText(f *testing.F) {
	for _, s := range []string{`{"a":"x","b":[1,{"c":"]"}],"d":null}`, `"\ud83d\ude00"`, "\u2028\xe2\x80", `{"a":1,}`, `"\u00"`, "\x00\x1f\x7f\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		back, err := appendUnquoted(nil, appendQuoted(nil, in))
		if err != nil || !bytes.Equal(back, in) {
			t.Fatalf("%q: quoted and unquoted gives %q, %v", in, back, err)
		}
		_, _ = appendUnquoted(nil, in)
		_ = eachField(in, func(key, value []byte) error {
			if len(key) < 2 || len(value) == 0 {
				t.Fatalf("%q: key %q value %q", in, key, value)
			}
			return nil
		})
		var d decimal.Sum
		_ = d.Add(in)
		var tot totalsOf
		tot.costStatus = map[string]uint64{}
		_ = tot.add(in)
	})
}
