package sanitize

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// canary brackets every payload; it is not in any skeleton token, so any
// occurrence in the output is a leaked literal.
const canary = "Ж"

// numberCanary does the same for numeric payloads.
const numberCanary = "4815162342"

// skeleton tokens for generated SQL. They are always separated by blanks,
// so a token never glues onto a literal and changes how it lexes.
var sqlVocabulary = []string{
	"SELECT", "FROM", "WHERE", "AND", "OR", "IN", "VALUES", "INSERT", "INTO", "UPDATE", "SET",
	"t1", "covid19", "users", "u.id", `"Col"`, "`c`", "(", ")", ",", "=", "<>", "+", "-", "*",
	"/", "::", "IS", "NOT", "NULL", "TRUE", "$1", "?", ":name", "@p1", "%s", "%(id)s",
	"-- note\n", "/* c */", ";", "\n", "LIMIT", "CASE", "WHEN", "THEN", "END", "DATE", "INTERVAL",
	"E", "N", "q", "x", "[c]", "{", "}",
}

// literalForms renders a payload as a literal of dialect d; each returns ""
// when the form does not exist in d.
var literalForms = []func(d Dialect, opts Options, p string) string{
	// plain string
	func(d Dialect, _ Options, p string) string {
		if d == MySQL || d == ClickHouse {
			p = strings.ReplaceAll(p, `\`, `\\`)
		}
		return "'" + strings.ReplaceAll(p, "'", "''") + "'"
	},
	// national string
	func(d Dialect, _ Options, p string) string {
		if d == MySQL || d == ClickHouse {
			p = strings.ReplaceAll(p, `\`, `\\`)
		}
		return "N'" + strings.ReplaceAll(p, "'", "''") + "'"
	},
	// E'…' with backslash escapes
	func(d Dialect, _ Options, p string) string {
		if d != PostgreSQL && d != Generic {
			return ""
		}
		p = strings.ReplaceAll(p, `\`, `\\`)
		return "E'" + strings.ReplaceAll(p, "'", `\'`) + "'"
	},
	// dollar quoting
	func(d Dialect, _ Options, p string) string {
		if d != PostgreSQL && d != Generic && d != ClickHouse {
			return ""
		}
		tag := "$z$"
		for i := 0; strings.Contains(p, tag); i++ {
			tag = "$z" + strconv.Itoa(i) + "$"
		}
		return tag + p + tag
	},
	// MySQL double-quoted string
	func(d Dialect, opts Options, p string) string {
		if d != MySQL || opts.MySQLANSIQuotes {
			return ""
		}
		p = strings.ReplaceAll(p, `\`, `\\`)
		return `"` + strings.ReplaceAll(p, `"`, `\"`) + `"`
	},
	// Oracle q-quote
	func(d Dialect, _ Options, p string) string {
		if d != Oracle && d != Generic {
			return ""
		}
		for _, pair := range []string{"[]", "{}", "<>", "()", "!!", "##", "||", "~~", "^^", "@@"} {
			if !strings.Contains(p, pair[1:]+"'") {
				return "q'" + pair[:1] + p + pair[1:] + "'"
			}
		}
		return "'" + strings.ReplaceAll(p, "'", "''") + "'"
	},
	// hex blob
	func(_ Dialect, _ Options, p string) string { return "X'" + hex.EncodeToString([]byte(p)) + "'" },
	// number
	func(_ Dialect, _ Options, p string) string {
		var b strings.Builder
		b.WriteString(numberCanary)
		for i := 0; i < len(p) && i < 12; i++ {
			b.WriteString(strconv.Itoa(int(p[i])))
		}
		b.WriteString(numberCanary + ".5e-3")
		return b.String()
	},
	// block comment (content must be stripped too)
	func(_ Dialect, _ Options, p string) string {
		// Without '*' the payload can neither close the comment nor
		// open a nested one (replacing "*/" alone could make a new one
		// out of "/*/").
		p = strings.ReplaceAll(p, "*", "+")
		return "/*" + p + "*/"
	},
	// line comment
	func(_ Dialect, _ Options, p string) string {
		return "--  " + strings.NewReplacer("\n", " ", "\r", " ").Replace(p) + "\n"
	},
	// rows after the statement: they run to the end of the query, so the
	// form starts a statement of its own
	func(_ Dialect, _ Options, p string) string {
		return "; INSERT INTO t FORMAT JSONEachRow " + p
	},
	func(_ Dialect, _ Options, p string) string {
		return "; INSERT INTO t (a) FORMAT CSV\n" + p
	},
	func(_ Dialect, _ Options, p string) string {
		return "; LOAD DATA INFILE * INTO TABLE t BEGINDATA\n" + p
	},
	// COPY text rows up to the end marker (a backslash in a row is
	// escaped, so no row is the marker)
	func(_ Dialect, _ Options, p string) string {
		return "; COPY t (a) FROM STDIN;\n" + strings.ReplaceAll(p, `\`, `\\`) + "\n\\.\n"
	},
}

var separators = []string{" ", "\n", "\t", "  "}

// buildSQL turns fuzz bytes into a query: a byte with the high bit set is a
// literal slot holding the payload, any other byte picks a skeleton token.
func buildSQL(shape []byte, d Dialect, opts Options, payload string) string {
	var b strings.Builder
	for i, c := range shape {
		if i > 0 {
			b.WriteString(separators[int(c)%len(separators)])
		}
		if c&0x80 == 0 {
			b.WriteString(sqlVocabulary[int(c)%len(sqlVocabulary)])
			continue
		}
		form := int(c&0x7f) % len(literalForms)
		lit := ""
		for k := 0; lit == ""; k++ {
			lit = literalForms[(form+k)%len(literalForms)](d, opts, payload)
		}
		b.WriteString(lit)
	}
	return b.String()
}

var redisTemplates = []string{
	"SET k:1 %v", "HSET h:x f %v", "AUTH %v", "EVAL %v 1 lock:a %v", "MSET a:b %v c:d %v",
	"LPUSH l:q %v %v", "GET k:1", "CONFIG SET maxmemory %v", "ZADD z:s %v %v",
}

func buildRedis(shape []byte, payload string) string {
	quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(payload) + `"`
	var lines []string
	for _, c := range shape {
		if c&0x80 != 0 {
			// Memcached storage command with its data block.
			lines = append(lines, fmt.Sprintf("set k:v 0 0 %d\r\n%s", len(payload), payload))
			continue
		}
		lines = append(lines, strings.ReplaceAll(redisTemplates[int(c)%len(redisTemplates)], "%v", quoted))
	}
	return strings.Join(lines, "\n")
}

var docTemplates = []string{
	`{"find": "c", "filter": {"a": %v, "b": {"$gt": %v}}}`, `{"q": {"$in": [%v, %v]}}`,
	`db.c.find({a: %v})`, `{"insert": "c", "documents": [{"x": %v}]}`, `[%v]`,
}

func buildDocument(shape []byte, payload string) string {
	jsonStr, _ := json.Marshal(payload)
	forms := []string{
		string(jsonStr),
		"'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`, "\n", `\n`).Replace(payload) + "'",
		numberCanary + "1",
		"/" + strings.NewReplacer(`\`, `\\`, `/`, `\/`, "\n", "", "[", `\[`).Replace(payload) + "/i",
	}
	var parts []string
	for i, c := range shape {
		holes := strings.Split(docTemplates[int(c)%len(docTemplates)], "%v")
		var b strings.Builder
		for k, h := range holes {
			if k > 0 {
				b.WriteString(forms[(int(c>>4)+i+k)%len(forms)])
			}
			b.WriteString(h)
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, "\n")
}

func fuzzOptions(flags uint8) Options {
	return Options{
		CollapseLists:    flags&1 != 0,
		KeepSQLCommenter: flags&2 != 0,
		MySQLANSIQuotes:  flags&4 != 0,
		Summarize:        flags&8 != 0,
	}
}

// FuzzPayloads is the leak oracle: generated queries carry random payloads
// in literal (and comment) positions. No payload may reach the output, and a
// fully sanitized output must not depend on the payload at all.
func FuzzPayloads(f *testing.F) {
	f.Add([]byte{0, 2, 8, 12, 0x80, 3, 0x81}, "it's a \\' secret", uint8(0), uint8(0))
	f.Add([]byte{0, 0x82, 1, 0x83, 2, 0x84}, "$z$ */ -- \n '", uint8(1), uint8(1))
	f.Add([]byte{0x85, 0x86, 0x87, 0x88, 0x89}, "\"\\\"", uint8(2), uint8(0))
	f.Add([]byte{0, 0x80, 0x81}, "]' }' >' )'", uint8(5), uint8(0))
	f.Add([]byte{1, 2, 0x80}, "a b\tc", uint8(7), uint8(0))
	f.Add([]byte{0, 1, 2}, "{\"x\": 1}", uint8(8), uint8(0))
	f.Add([]byte{0x80, 0}, "\x00\xff", uint8(4), uint8(2))
	f.Add([]byte{0, 0x8a, 1}, `{"name":"jane"}`, uint8(ClickHouse), uint8(0))
	f.Add([]byte{0x8b, 0, 0x8c}, "jane\tdoe\n\\.", uint8(Generic), uint8(9))
	f.Add([]byte{0x8d, 0, 0x8a}, "jane\tdoe\n\\.\nSELECT", uint8(PostgreSQL), uint8(1))
	f.Fuzz(func(t *testing.T, shape []byte, payload string, dialect uint8, flags uint8) {
		if len(shape) > 64 || len(payload) > 256 {
			return
		}
		d := Dialect(dialect % uint8(dialectCount))
		opts := fuzzOptions(flags)
		build := func(p string) string {
			switch d {
			case Redis:
				return buildRedis(shape, p)
			case MongoDB, JSON:
				return buildDocument(shape, p)
			}
			return buildSQL(shape, d, opts, p)
		}
		// The canary must survive encoding (a payload cut in the middle of
		// a rune is still bracketed by whole canaries).
		marked := canary + payload[:len(payload)/2] + canary + payload[len(payload)/2:] + canary
		query := build(marked)
		res := Sanitize(query, d, opts)
		if strings.Contains(res.Text, canary) || strings.Contains(res.Text, numberCanary) {
			t.Fatalf("payload leaked (%s)\n in: %q\nout: %q", d, query, res.Text)
		}
		if strings.Contains(res.Summary, canary) || strings.Contains(res.Operation, canary) {
			t.Fatalf("payload leaked into summary (%s): %q %q", d, res.Summary, res.Operation)
		}
		if res.Partial {
			return
		}
		benign := Sanitize(build(canary+"b"+canary), d, opts)
		if !benign.Partial && benign.Text != res.Text {
			t.Fatalf("output depends on the payload (%s)\n in: %q\nout: %q\nbenign: %q", d, query, res.Text, benign.Text)
		}
	})
}

// FuzzSanitize feeds arbitrary text to every dialect: no panic, valid UTF-8,
// bounded output, and (for SQL) a fully sanitized output is a fixed point.
func FuzzSanitize(f *testing.F) {
	for _, c := range commonSQLCases {
		f.Add(c.in, uint8(0), uint8(0))
	}
	for _, c := range inlineRowsCases {
		f.Add(c.in, uint8(ClickHouse), uint8(9))
		f.Add(c.in, uint8(PostgreSQL), uint8(0))
	}
	f.Add("SELECT $a$ x $a$, q'[y]', E'\\'', [z]]], `w`` `", uint8(0), uint8(1))
	f.Add("INSERT INTO t VALUES (1,'a'),(2,'b') /*k='v'*/", uint8(2), uint8(3))
	f.Add("SET k:1 \"v\"\nGET k:1", uint8(Redis), uint8(0))
	f.Add(`{"find": "c", "filter": {"a": /x/i}}`, uint8(MongoDB), uint8(8))
	f.Add("SELECT /* /* */ 'x' */ 1", uint8(PostgreSQL), uint8(0))
	f.Fuzz(func(t *testing.T, query string, dialect uint8, flags uint8) {
		d := Dialect(dialect % uint8(dialectCount))
		opts := fuzzOptions(flags)
		opts.MaxLength = 1 << 16
		res := Sanitize(query, d, opts)
		if !utf8.ValidString(res.Text) {
			t.Fatalf("invalid UTF-8 output: %q", res.Text)
		}
		if len(res.Text) > 3*len(query)+2 {
			t.Fatalf("output grew from %d to %d bytes", len(query), len(res.Text))
		}
		if again := Sanitize(query, d, opts); again != res {
			t.Fatalf("not deterministic: %+v vs %+v", res, again)
		}
		if d < Redis && !res.Partial {
			if again := Sanitize(res.Text, d, opts); again.Text != res.Text {
				t.Fatalf("not a fixed point (%s)\n  in: %q\n out: %q\nout2: %q", d, query, res.Text, again.Text)
			}
		}
	})
}
