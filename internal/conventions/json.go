package conventions

import "encoding/json"

// field is one top-level member of a JSON object: its key and the JSON
// text of its value, both slices of the object's text.
type field struct{ key, raw string }

// topLevel lists the members of the JSON object s without decoding their
// values: the few metadata fields read of a raw response or a parameter
// object are found without building the rest. Keys with escapes are
// decoded. It reports an error for anything but a valid object.
func topLevel(s string) ([]field, bool) {
	if !json.Valid([]byte(s)) {
		return nil, true
	}
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return nil, true
	}
	var out []field
	i = skipSpace(s, i+1)
	for i < len(s) && s[i] != '}' {
		end := skipValue(s, i)
		key := s[i+1 : end-1]
		if hasEscape(key) {
			var k string
			_ = json.Unmarshal([]byte(s[i:end]), &k)
			key = k
		}
		i = skipSpace(s, end)
		i = skipSpace(s, i+1) // ':'
		end = skipValue(s, i)
		out = append(out, field{key, s[i:end]})
		i = skipSpace(s, end)
		if i < len(s) && s[i] == ',' {
			i = skipSpace(s, i+1)
		}
	}
	return out, false
}

func hasEscape(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			return true
		}
	}
	return false
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the end of the JSON value starting at i in valid JSON.
func skipValue(s string, i int) int {
	switch s[i] {
	case '"':
		for j := i + 1; j < len(s); j++ {
			switch s[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(s)
	case '{', '[':
		depth := 0
		for j := i; j < len(s); j++ {
			switch s[j] {
			case '"':
				j = skipValue(s, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(s)
	}
	j := i
	for j < len(s) && s[j] != ',' && s[j] != '}' && s[j] != ']' && s[j] != ' ' && s[j] != '\n' && s[j] != '\t' && s[j] != '\r' {
		j++
	}
	return j
}
