package contentstore

import (
	"bytes"
	"sort"
	"unicode/utf8"
)

// maxJSONDepth bounds nesting; deeper documents are stored as text.
const maxJSONDepth = 256

// Canonicalize returns the form in which content is hashed and stored, so
// that the same message sent twice — re-serialized with other whitespace or
// another key order — is one object.
//
// Content that is a JSON object or array (valid UTF-8, nesting at most 256)
// becomes canonical JSON: no insignificant whitespace, object members
// sorted by the bytes of their canonical key (duplicate keys are all kept,
// in their original order), strings in minimal escaping (only '"', '\\'
// and control characters are escaped; \u escapes of other characters are
// decoded; a lone surrogate stays an escape), numbers and literals as
// written. Anything else — plain text, invalid JSON, JSON scalars — is
// returned unchanged: text is evidence, and changing a byte of it would
// change what was said.
//
// The result is never longer than the input. Work is linear in the input
// times the nesting depth of objects; memory is the output plus one scratch
// buffer and three ints per member of the objects being built.
func Canonicalize(content []byte) []byte {
	start := skipSpace(content, 0)
	if start == len(content) || content[start] != '{' && content[start] != '[' || !utf8.Valid(content) {
		return content
	}
	c := canonicalizer{in: content, out: make([]byte, 0, len(content)-start)}
	end, ok := c.value(start, 0)
	if !ok || skipSpace(content, end) != len(content) {
		return content
	}
	return c.out
}

type canonicalizer struct {
	in, out []byte
	scratch []byte
	members []member // members of the objects on the current path
}

// member is one object member already written to out: the key spans
// out[key:colon], the value out[colon+1:end].
type member struct{ key, colon, end int }

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// value writes the canonical form of the value starting at in[i] and
// returns the position after it.
func (c *canonicalizer) value(i, depth int) (int, bool) {
	if i >= len(c.in) {
		return i, false
	}
	switch b := c.in[i]; {
	case b == '{':
		return c.object(i+1, depth+1)
	case b == '[':
		return c.array(i+1, depth+1)
	case b == '"':
		return c.str(i)
	case b == 't':
		return c.literal(i, "true")
	case b == 'f':
		return c.literal(i, "false")
	case b == 'n':
		return c.literal(i, "null")
	case b == '-' || b >= '0' && b <= '9':
		return c.number(i)
	}
	return i, false
}

func (c *canonicalizer) literal(i int, lit string) (int, bool) {
	if !bytes.HasPrefix(c.in[i:], []byte(lit)) {
		return i, false
	}
	c.out = append(c.out, lit...)
	return i + len(lit), true
}

// number checks the JSON number grammar and copies the number as written.
func (c *canonicalizer) number(i int) (int, bool) {
	start := i
	digits := func() int {
		n := 0
		for i < len(c.in) && c.in[i] >= '0' && c.in[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if c.in[i] == '-' {
		i++
	}
	if i < len(c.in) && c.in[i] == '0' {
		i++
	} else if digits() == 0 {
		return i, false
	}
	if i < len(c.in) && c.in[i] == '.' {
		i++
		if digits() == 0 {
			return i, false
		}
	}
	if i < len(c.in) && (c.in[i] == 'e' || c.in[i] == 'E') {
		i++
		if i < len(c.in) && (c.in[i] == '+' || c.in[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, false
		}
	}
	c.out = append(c.out, c.in[start:i]...)
	return i, true
}

func (c *canonicalizer) array(i, depth int) (int, bool) {
	if depth > maxJSONDepth {
		return i, false
	}
	c.out = append(c.out, '[')
	i = skipSpace(c.in, i)
	if i < len(c.in) && c.in[i] == ']' {
		c.out = append(c.out, ']')
		return i + 1, true
	}
	for {
		var ok bool
		if i, ok = c.value(skipSpace(c.in, i), depth); !ok {
			return i, false
		}
		i = skipSpace(c.in, i)
		if i >= len(c.in) {
			return i, false
		}
		switch c.in[i] {
		case ',':
			c.out = append(c.out, ',')
			i++
		case ']':
			c.out = append(c.out, ']')
			return i + 1, true
		default:
			return i, false
		}
	}
}

// object writes the members in input order, then reorders them in place
// when they are not already sorted.
func (c *canonicalizer) object(i, depth int) (int, bool) {
	if depth > maxJSONDepth {
		return i, false
	}
	c.out = append(c.out, '{')
	body := len(c.out)
	base := len(c.members)
	defer func() { c.members = c.members[:base] }()
	i = skipSpace(c.in, i)
	if i < len(c.in) && c.in[i] == '}' {
		c.out = append(c.out, '}')
		return i + 1, true
	}
	for {
		i = skipSpace(c.in, i)
		if i >= len(c.in) || c.in[i] != '"' {
			return i, false
		}
		if len(c.members) > base {
			c.out = append(c.out, ',')
		}
		m := member{key: len(c.out)}
		var ok bool
		if i, ok = c.str(i); !ok {
			return i, false
		}
		i = skipSpace(c.in, i)
		if i >= len(c.in) || c.in[i] != ':' {
			return i, false
		}
		m.colon = len(c.out)
		c.out = append(c.out, ':')
		if i, ok = c.value(skipSpace(c.in, i+1), depth); !ok {
			return i, false
		}
		m.end = len(c.out)
		c.members = append(c.members, m)
		i = skipSpace(c.in, i)
		if i >= len(c.in) {
			return i, false
		}
		if c.in[i] == '}' {
			i++
			break
		}
		if c.in[i] != ',' {
			return i, false
		}
		i++
	}
	c.sortMembers(body, c.members[base:])
	c.out = append(c.out, '}')
	return i, true
}

func (c *canonicalizer) sortMembers(body int, ms []member) {
	less := func(a, b member) bool {
		return bytes.Compare(c.out[a.key:a.colon], c.out[b.key:b.colon]) < 0
	}
	sorted := true
	for k := 1; k < len(ms) && sorted; k++ {
		sorted = !less(ms[k], ms[k-1])
	}
	if sorted {
		return
	}
	// Keys are compared in out, so sort before copying out away.
	sort.SliceStable(ms, func(a, b int) bool { return less(ms[a], ms[b]) })
	c.scratch = append(c.scratch[:0], c.out[body:]...)
	w := body
	for k, m := range ms {
		if k > 0 {
			c.out[w] = ','
			w++
		}
		w += copy(c.out[w:], c.scratch[m.key-body:m.end-body])
	}
}

// str writes the canonical form of the string starting at in[i] (a '"').
func (c *canonicalizer) str(i int) (int, bool) {
	c.out = append(c.out, '"')
	i++
	run := i // start of bytes copied unchanged
	for i < len(c.in) {
		b := c.in[i]
		switch {
		case b == '"':
			c.out = append(c.out, c.in[run:i]...)
			c.out = append(c.out, '"')
			return i + 1, true
		case b < 0x20:
			return i, false
		case b != '\\':
			i++
			continue
		}
		c.out = append(c.out, c.in[run:i]...)
		if i+1 >= len(c.in) {
			return i, false
		}
		switch e := c.in[i+1]; e {
		case '"', '\\':
			c.out = append(c.out, '\\', e)
			i += 2
		case '/':
			c.out = append(c.out, '/')
			i += 2
		case 'b', 'f', 'n', 'r', 't':
			c.out = append(c.out, '\\', e)
			i += 2
		case 'u':
			r, n, ok := c.unicodeEscape(i)
			if !ok {
				return i, false
			}
			c.appendRune(r)
			i += n
		default:
			return i, false
		}
		run = i
	}
	return i, false
}

// unicodeEscape decodes \uXXXX (or a surrogate pair of them) at in[i]. A
// lone surrogate comes back as the surrogate itself, which appendRune keeps
// as an escape.
func (c *canonicalizer) unicodeEscape(i int) (rune, int, bool) {
	r, ok := hex4(c.in, i+2)
	if !ok {
		return 0, 0, false
	}
	if r >= 0xD800 && r < 0xDC00 && i+11 < len(c.in) && c.in[i+6] == '\\' && c.in[i+7] == 'u' {
		if lo, ok := hex4(c.in, i+8); ok && lo >= 0xDC00 && lo < 0xE000 {
			return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12, true
		}
	}
	return r, 6, true
}

func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, h := range b[i : i+4] {
		var v byte
		switch {
		case h >= '0' && h <= '9':
			v = h - '0'
		case h >= 'a' && h <= 'f':
			v = h - 'a' + 10
		case h >= 'A' && h <= 'F':
			v = h - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

func (c *canonicalizer) appendRune(r rune) {
	const hexdigits = "0123456789abcdef"
	switch {
	case r == '"' || r == '\\':
		c.out = append(c.out, '\\', byte(r))
	case r == '\b':
		c.out = append(c.out, '\\', 'b')
	case r == '\f':
		c.out = append(c.out, '\\', 'f')
	case r == '\n':
		c.out = append(c.out, '\\', 'n')
	case r == '\r':
		c.out = append(c.out, '\\', 'r')
	case r == '\t':
		c.out = append(c.out, '\\', 't')
	case r < 0x20 || r >= 0xD800 && r < 0xE000:
		c.out = append(c.out, '\\', 'u', hexdigits[r>>12&15], hexdigits[r>>8&15], hexdigits[r>>4&15], hexdigits[r&15])
	default:
		c.out = utf8.AppendRune(c.out, r)
	}
}
