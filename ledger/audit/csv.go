package audit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// CSV files are RFC 4180 (comma, CRLF, double quotes doubled) with one
// extra rule that keeps NULL apart from the empty string: a NULL is an
// empty field without quotes, and every string value is quoted, so an
// empty string is "". Strings are the values themselves; every other value
// (numbers, arrays, maps) is its canonical JSON text. With the column types
// from the manifest a CSV record maps back to exactly one canonical row.
// encoding/csv cannot be used: it does not report which fields were quoted
// and turns CRLF inside quoted fields into LF.
//
// Spreadsheets run a cell that starts with = + - @ (or a tab or CR before
// one) as a formula, so a string that starts with one of those, or with
// the apostrophe that marks the rule, is written with an apostrophe in
// front ('=1+1), which spreadsheets show as text; readers take one leading
// apostrophe off a string cell. Numbers are never prefixed: a negative
// number is not a formula.

// formulaMark is put in front of a string cell that could run as a formula.
const formulaMark = '\''

// formulaLike reports whether a string cell needs formulaMark in front.
func formulaLike(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	switch s[0] {
	case '=', '+', '-', '@', '\t', '\r', formulaMark:
		return true
	}
	return false
}

// Column is one exported column as the engine names and types it.
type Column struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

var (
	columnName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	columnType = regexp.MustCompile(`^[A-Za-z0-9_(), ']{1,200}$`)
)

// layout is what mapping between canonical rows and CSV records needs to
// know about the columns.
type layout struct {
	keys [][]byte // each name as a JSON string
	text []bool   // the engine writes the column's values as JSON strings
}

func newLayout(cols []Column) (*layout, error) {
	if len(cols) == 0 {
		return nil, errors.New("no columns")
	}
	l := &layout{keys: make([][]byte, len(cols)), text: make([]bool, len(cols))}
	seen := map[string]bool{}
	for i, c := range cols {
		if !columnName.MatchString(c.Name) || seen[c.Name] {
			return nil, fmt.Errorf("column %d: invalid or repeated name", i+1)
		}
		seen[c.Name] = true
		text, err := textual(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		l.keys[i] = appendQuoted(nil, []byte(c.Name))
		l.text[i] = text
	}
	return l, nil
}

// textual reports whether the engine writes values of type t as JSON
// strings (under the settings in queries/audit_settings.sql). Types come
// from a manifest into the engine's structure string when Parquet is read
// back, so only type names are accepted: a space only after a comma, which
// keeps out clauses such as DEFAULT.
func textual(t string) (bool, error) {
	if !columnType.MatchString(t) || !spacesAfterCommas(t) {
		return false, errors.New("invalid type")
	}
	for _, wrapper := range []string{"Nullable(", "LowCardinality("} {
		if inner, ok := strings.CutPrefix(t, wrapper); ok && strings.HasSuffix(inner, ")") {
			t = strings.TrimSuffix(inner, ")")
		}
	}
	base, _, _ := strings.Cut(t, "(")
	switch base {
	case "String", "FixedString", "UUID", "Date", "Date32", "DateTime", "DateTime64", "Enum8", "Enum16", "IPv4", "IPv6":
		return true, nil
	case "Int8", "Int16", "Int32", "Int64", "Int128", "Int256", "UInt8", "UInt16", "UInt32", "UInt64", "UInt128", "UInt256",
		"Float32", "Float64", "Bool", "Decimal", "Decimal32", "Decimal64", "Decimal128", "Decimal256", "Array", "Map", "Tuple":
		return false, nil
	}
	return false, fmt.Errorf("type %q is not supported in CSV exports", t)
}

func spacesAfterCommas(t string) bool {
	for i := 0; i < len(t); i++ {
		if t[i] == ' ' && (i == 0 || t[i-1] != ',') {
			return false
		}
	}
	return true
}

// csvWriter writes canonical rows as CSV records.
type csvWriter struct {
	w       *bufio.Writer
	l       *layout
	scratch []byte
}

func (c *csvWriter) header(cols []Column) error {
	for i, col := range cols {
		if i > 0 {
			c.w.WriteByte(',')
		}
		c.w.WriteString(col.Name)
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

var errRowColumns = errors.New("row does not have the export's columns")

func (c *csvWriter) row(row []byte) error {
	i := 0
	err := eachField(row, func(key, value []byte) error {
		if i >= len(c.l.keys) || !bytes.Equal(key, c.l.keys[i]) {
			return errRowColumns
		}
		if i > 0 {
			c.w.WriteByte(',')
		}
		switch {
		case bytes.Equal(value, jsonNull):
		case c.l.text[i]:
			var err error
			if c.scratch, err = appendUnquoted(c.scratch[:0], value); err != nil {
				return err
			}
			c.writeQuoted(c.scratch, formulaLike(c.scratch))
		case bytes.ContainsAny(value, ",\"\r\n"):
			c.writeQuoted(value, false)
		default:
			c.w.Write(value)
		}
		i++
		return nil
	})
	if err != nil {
		return err
	}
	if i != len(c.l.keys) {
		return errRowColumns
	}
	_, err = c.w.WriteString("\r\n")
	return err
}

// writeQuoted writes s as a quoted field, with formulaMark in front if mark.
func (c *csvWriter) writeQuoted(s []byte, mark bool) {
	c.w.WriteByte('"')
	if mark {
		c.w.WriteByte(formulaMark)
	}
	for {
		i := bytes.IndexByte(s, '"')
		if i < 0 {
			break
		}
		c.w.Write(s[:i+1])
		c.w.WriteByte('"')
		s = s[i+1:]
	}
	c.w.Write(s)
	c.w.WriteByte('"')
}

// csvReader reads the records of a CSV file with, for every field, whether
// it was quoted. It accepts CRLF or LF line ends and a last record without
// one; a record longer than max bytes is an error, so a file without a
// closing quote cannot exhaust memory.
type csvReader struct {
	r      *bufio.Reader
	max    int
	buf    []byte
	ends   []int
	fields [][]byte
	quoted []bool
}

func newCSVReader(r io.Reader, max int) *csvReader {
	return &csvReader{r: bufio.NewReaderSize(r, 1<<16), max: max}
}

var (
	errCSVQuote   = errors.New("malformed quoting")
	errCSVTooLong = errors.New("record too long")
)

// next reads one record into fields and quoted; io.EOF when there is none.
func (c *csvReader) next() error {
	c.buf, c.ends, c.quoted = c.buf[:0], c.ends[:0], c.quoted[:0]
	b, err := c.r.ReadByte()
	if err != nil {
		return err
	}
	for {
		quoted := b == '"'
		if quoted {
			for {
				if b, err = c.r.ReadByte(); err != nil {
					return c.fail(err, errCSVQuote)
				}
				if b == '"' {
					if b, err = c.r.ReadByte(); err != nil || b != '"' {
						break
					}
				}
				if c.buf = append(c.buf, b); len(c.buf) > c.max {
					return errCSVTooLong
				}
			}
		} else {
			for b != ',' && b != '\r' && b != '\n' {
				if b == '"' {
					return errCSVQuote
				}
				if c.buf = append(c.buf, b); len(c.buf) > c.max {
					return errCSVTooLong
				}
				if b, err = c.r.ReadByte(); err != nil {
					break
				}
			}
		}
		c.ends = append(c.ends, len(c.buf))
		c.quoted = append(c.quoted, quoted)
		if err == io.EOF {
			return c.split()
		}
		if err != nil {
			return err
		}
		switch b {
		case ',':
			if b, err = c.r.ReadByte(); err == io.EOF {
				// A trailing comma: the last field is empty.
				c.ends = append(c.ends, len(c.buf))
				c.quoted = append(c.quoted, false)
				return c.split()
			} else if err != nil {
				return err
			}
		case '\r':
			if b, err = c.r.ReadByte(); err != nil || b != '\n' {
				return c.fail(err, errCSVQuote)
			}
			return c.split()
		case '\n':
			return c.split()
		default:
			return errCSVQuote
		}
	}
}

// fail returns a read error other than EOF as it is, and want otherwise.
func (c *csvReader) fail(err, want error) error {
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return want
}

func (c *csvReader) split() error {
	c.fields = c.fields[:0]
	start := 0
	for _, end := range c.ends {
		c.fields = append(c.fields, c.buf[start:end])
		start = end
	}
	return nil
}

// canonical appends the canonical row a CSV record stands for.
func (l *layout) canonical(dst []byte, fields [][]byte, quoted []bool) ([]byte, error) {
	if len(fields) != len(l.keys) {
		return dst, fmt.Errorf("%d fields, want %d", len(fields), len(l.keys))
	}
	dst = append(dst, '{')
	for i, f := range fields {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(append(dst, l.keys[i]...), ':')
		switch {
		case !quoted[i] && len(f) == 0:
			dst = append(dst, jsonNull...)
		case l.text[i]:
			if quoted[i] && len(f) > 0 && f[0] == formulaMark {
				f = f[1:]
			}
			dst = appendQuoted(dst, f)
		default:
			dst = append(dst, f...)
		}
	}
	return append(dst, '}'), nil
}
