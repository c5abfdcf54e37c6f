package contentstore

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCanonicalize(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"whitespace and key order", "{ \"role\" : \"user\",\n \"parts\": [ {\"type\":\"text\", \"content\":\"hi\"} ] }",
			`{"parts":[{"content":"hi","type":"text"}],"role":"user"}`},
		{"already canonical", `[{"a":1,"b":[true,false,null]}]`, `[{"a":1,"b":[true,false,null]}]`},
		{"escapes decoded to minimal form", `["\u00e9\/\u0041","\ud83d\ude00","\"\\\b\f\n\r\t\u0001"]`,
			"[\"é/A\",\"😀\",\"\\\"\\\\\\b\\f\\n\\r\\t\\u0001\"]"},
		{"lone surrogate stays an escape", `["\uD800x"]`, `["\ud800x"]`},
		{"duplicate keys kept in order", `{"b":1,"a":2,"b":3}`, `{"a":2,"b":1,"b":3}`},
		{"escaped key sorts by canonical form", `{"\u0062":1,"a":2}`, `{"a":2,"b":1}`},
		{"numbers as written", `[1.50, -0, 1E+3, 2e-7]`, `[1.50,-0,1E+3,2e-7]`},
		{"nested objects sorted at every level", `{"z":{"y":1,"x":{"b":0,"a":0}},"a":[]}`, `{"a":[],"z":{"x":{"a":0,"b":0},"y":1}}`},
		{"empty containers", ` { } `, `{}`},
		// Not JSON objects or arrays: kept byte for byte.
		{"plain text", "yes", "yes"},
		{"text with spaces", "  My card is 4111 1111 1111 1111  ", "  My card is 4111 1111 1111 1111  "},
		{"json scalar", `"quoted"`, `"quoted"`},
		{"number", " 42 ", " 42 "},
		{"truncated", `{"a":`, `{"a":`},
		{"trailing garbage", `{"a":1} x`, `{"a":1} x`},
		{"trailing comma", `[1,]`, `[1,]`},
		{"raw control char in string", "[\"a\tb\"]", "[\"a\tb\"]"},
		{"invalid utf8", "[\"\xff\"]", "[\"\xff\"]"},
		{"bad escape", `["\x"]`, `["\x"]`},
		{"leading zero", `[01]`, `[01]`},
		{"single quotes", `{'a':1}`, `{'a':1}`},
		{"nul byte outside strings", "[1]\x00", "[1]\x00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Canonicalize([]byte(tc.in))); got != tc.want {
				t.Fatalf("Canonicalize(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestCanonicalizeDepthBound(t *testing.T) {
	deep := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	if got := string(Canonicalize([]byte(deep))); got != deep {
		t.Fatal("over-deep document must come back unchanged")
	}
	ok := strings.Repeat("[ ", maxJSONDepth) + strings.Repeat("]", maxJSONDepth)
	if got := string(Canonicalize([]byte(ok))); got != strings.ReplaceAll(ok, " ", "") {
		t.Fatal("document at the depth bound must be canonicalized")
	}
}

// Messages that differ only in serialization are one object.
func TestCanonicalizeSameMessage(t *testing.T) {
	msgs := []any{
		map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": "Call me at +82-10-5550-1234 <ok>"}}},
	}
	compact, _ := json.Marshal(msgs)
	indented, _ := json.MarshalIndent(msgs, "", "    ")
	python := []byte(`[{"role": "user", "parts": [{"type": "text", "content": "Call me at +82-10-5550-1234 \u003cok\u003e"}]}]`)
	a, b, c := Canonicalize(compact), Canonicalize(indented), Canonicalize(python)
	if !bytes.Equal(a, b) || !bytes.Equal(a, c) {
		t.Fatalf("different canonical forms:\n%s\n%s\n%s", a, b, c)
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{
		`{"b":[1,{"d":null,"c":"\u00e9"}],"a":"x"}`, `[]`, `{}`, `["\ud800"]`, `{"a":1,"a":2}`,
		"plain text", `[1e5,-0.0]`, `{"k": "\\\"\/"}`, "[\"\xff\"]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := Canonicalize(in)
		if len(out) > len(in) {
			t.Fatalf("canonical form longer than input: %d > %d", len(out), len(in))
		}
		if !bytes.Equal(Canonicalize(out), out) {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, out, Canonicalize(out))
		}
		trimmed := bytes.TrimLeft(in, " \t\r\n")
		isContainer := len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[')
		if !isContainer || !utf8.Valid(in) {
			if !bytes.Equal(out, in) {
				t.Fatalf("non-JSON content changed: %q -> %q", in, out)
			}
			return
		}
		if !json.Valid(in) {
			if !bytes.Equal(out, in) {
				t.Fatalf("invalid JSON changed: %q -> %q", in, out)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form of valid JSON is invalid: %q -> %q", in, out)
		}
		// Same document: decode both (duplicate keys resolve to the last,
		// whose relative order the stable sort keeps).
		var x, y any
		dx := json.NewDecoder(bytes.NewReader(in))
		dx.UseNumber()
		dy := json.NewDecoder(bytes.NewReader(out))
		dy.UseNumber()
		if dx.Decode(&x) != nil || dy.Decode(&y) != nil || !reflect.DeepEqual(x, y) {
			t.Fatalf("canonical form means something else: %q -> %q", in, out)
		}
	})
}
