package storage

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bind replaces ClickHouse query parameters ({name:Type}) with literals.
// Binding happens client-side because chDB has no prepared statements or
// server-side parameters; values are escaped per the ClickHouse literal
// grammar and typed by the placeholder, so a value can never become SQL.
func Bind(query string, params map[string]any) (string, error) {
	var b strings.Builder
	b.Grow(len(query))
	used := make(map[string]bool, len(params))
	for i := 0; i < len(query); {
		c := query[i]
		if c != '{' {
			b.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexByte(query[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("storage: bind: unterminated placeholder at offset %d", i)
		}
		name, typ, ok := strings.Cut(query[i+1:i+end], ":")
		if !ok || name == "" {
			return "", fmt.Errorf("storage: bind: placeholder at offset %d has no name or no type", i)
		}
		v, found := params[name]
		if !found {
			return "", fmt.Errorf("storage: bind: no value for parameter %q", name)
		}
		lit, err := literal(typ, v)
		if err != nil {
			return "", fmt.Errorf("storage: bind %q: %w", name, err)
		}
		b.WriteString(lit)
		used[name] = true
		i += end + 1
	}
	for name := range params {
		if !used[name] {
			return "", fmt.Errorf("storage: bind: parameter %q has no placeholder", name)
		}
	}
	return b.String(), nil
}

func literal(typ string, v any) (string, error) {
	switch typ {
	case "String":
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("want string, got %T", v)
		}
		return Quote(s), nil
	case "UInt32", "UInt64", "Int64":
		switch n := v.(type) {
		case int:
			return strconv.FormatInt(int64(n), 10), nil
		case int64:
			return strconv.FormatInt(n, 10), nil
		case uint32:
			return strconv.FormatUint(uint64(n), 10), nil
		case uint64:
			return strconv.FormatUint(n, 10), nil
		}
		return "", fmt.Errorf("want integer, got %T", v)
	case "DateTime64":
		t, ok := v.(time.Time)
		if !ok {
			return "", fmt.Errorf("want time.Time, got %T", v)
		}
		if y := t.UTC().Year(); y < 1900 || y > 2261 {
			return "", fmt.Errorf("time %v outside DateTime64(9)'s range", t)
		}
		return "toDateTime64(" + Quote(t.UTC().Format("2006-01-02 15:04:05.000000000")) + ", 9, 'UTC')", nil
	}
	return "", fmt.Errorf("unsupported parameter type %q", typ)
}

// Quote returns s as a ClickHouse string literal.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// BindTenants adds to params the set of tenants a query reads, as the
// queries take it ({all_tenants:UInt32} and {tenants:String}, a JSON array
// of names): every tenant when all, else those named (none when empty).
func BindTenants(params map[string]any, all bool, names []string) error {
	if names == nil {
		names = []string{}
	}
	b, err := json.Marshal(names)
	if err != nil {
		return fmt.Errorf("storage: encode tenants: %w", err)
	}
	params["all_tenants"], params["tenants"] = uint32(0), string(b)
	if all {
		params["all_tenants"] = uint32(1)
	}
	return nil
}
