package audit

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// A canonical row is one JSON object as the engine's JSONEachRow writes it
// under the settings in queries/audit_settings.sql (see README.md). These
// helpers take such rows apart and put them together again without a JSON
// library: encoding/json would replace invalid UTF-8 and reorder nothing
// back, and the bytes must survive a round trip exactly.

var errRowSyntax = errors.New("not a canonical JSON object")

// eachField calls fn with every top-level member of row: key is the JSON
// string of the name (quotes included), value the JSON value, both as they
// appear in row.
func eachField(row []byte, fn func(key, value []byte) error) error {
	if len(row) < 2 || row[0] != '{' || row[len(row)-1] != '}' {
		return errRowSyntax
	}
	if len(row) == 2 {
		return nil
	}
	for i := 1; ; {
		if row[i] != '"' {
			return errRowSyntax
		}
		keyEnd, err := skipString(row, i)
		if err != nil {
			return err
		}
		if keyEnd >= len(row) || row[keyEnd] != ':' {
			return errRowSyntax
		}
		valueEnd, err := skipValue(row, keyEnd+1)
		if err != nil {
			return err
		}
		if err := fn(row[i:keyEnd], row[keyEnd+1:valueEnd]); err != nil {
			return err
		}
		switch {
		case valueEnd == len(row)-1:
			return nil
		case valueEnd < len(row)-1 && row[valueEnd] == ',':
			i = valueEnd + 1
		default:
			return errRowSyntax
		}
	}
}

// skipString returns the index after the JSON string starting at b[i].
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("%w: unterminated string", errRowSyntax)
}

// skipValue returns the index after the JSON value starting at b[i].
// Nesting is followed only as far as needed to find the value's end.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errRowSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, fmt.Errorf("%w: unterminated array or object", errRowSyntax)
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != '"' && b[j] > ' ' {
		j++
	}
	if j == i {
		return 0, errRowSyntax
	}
	return j, nil
}

// appendQuoted appends s as a JSON string escaped exactly as the engine
// escapes strings: the two-character escapes for ", \, \b, \f, \n, \r, \t;
// \u00XX (upper-case hex) for the other bytes below 0x20; \u2028 and \u2029
// for those two line separators; every other byte as it is ("/", 0x7F,
// non-ASCII and invalid UTF-8 included).
func appendQuoted(dst, s []byte) []byte {
	const hex = "0123456789ABCDEF"
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			switch {
			case c < 0x20:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
				dst = append(dst, '\\', 'u', '2', '0', '2', "89"[s[i+2]-0xA8])
				i += 2
			default:
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// appendUnquoted appends the bytes the JSON string q (quotes included)
// stands for. Bytes that need no escape are copied as they are, so invalid
// UTF-8 written by the engine survives.
func appendUnquoted(dst, q []byte) ([]byte, error) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return dst, fmt.Errorf("%w: not a string", errRowSyntax)
	}
	s := q[1 : len(q)-1]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '"' {
			return dst, fmt.Errorf("%w: unescaped quote in string", errRowSyntax)
		}
		if c != '\\' {
			dst = append(dst, c)
			continue
		}
		if i+1 >= len(s) {
			return dst, fmt.Errorf("%w: dangling escape", errRowSyntax)
		}
		i++
		switch s[i] {
		case '"', '\\', '/':
			dst = append(dst, s[i])
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[i+1:])
			if !ok {
				return dst, fmt.Errorf("%w: bad \\u escape", errRowSyntax)
			}
			i += 4
			if r >= 0xD800 && r < 0xDC00 {
				lo, ok := hex4(s[min(i+3, len(s)):])
				if !ok || i+2 >= len(s) || s[i+1] != '\\' || s[i+2] != 'u' || lo < 0xDC00 || lo >= 0xE000 {
					return dst, fmt.Errorf("%w: lone surrogate", errRowSyntax)
				}
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				i += 6
			} else if r >= 0xDC00 && r < 0xE000 {
				return dst, fmt.Errorf("%w: lone surrogate", errRowSyntax)
			}
			dst = utf8.AppendRune(dst, r)
		default:
			return dst, fmt.Errorf("%w: unknown escape", errRowSyntax)
		}
	}
	return dst, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
