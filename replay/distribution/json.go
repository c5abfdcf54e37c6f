package distribution

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// JSONReport compares outputs with an original that is a JSON object or
// array, field by field. Fields are leaf paths such as $.order.items[0].sku.
type JSONReport struct {
	// Parsed counts the outputs that are JSON objects or arrays.
	Parsed int `json:"parsed"`
	// Fields has one entry per leaf of the original (object keys sorted).
	Fields []FieldStat `json:"fields"`
	// FieldsCut is set when the original had more leaves than are compared.
	FieldsCut bool         `json:"fields_cut,omitempty"`
	Outputs   []JSONOutput `json:"outputs"`
}

// FieldStat counts, over the outputs that parse, how one field of the
// original came back.
type FieldStat struct {
	Path    string `json:"path"`
	Matches int    `json:"matches"`
	Differs int    `json:"differs"`
	Missing int    `json:"missing"`
}

// JSONOutput is one output's field-by-field comparison.
type JSONOutput struct {
	Parses bool `json:"parses"`
	// Matches: every field equals the original's and there is no other.
	Matches bool `json:"matches"`
	// Paths that differ, are missing, or are extra (at most maxPathsListed
	// each; the counts are complete).
	Differing      []string `json:"differing,omitempty"`
	Missing        []string `json:"missing,omitempty"`
	Extra          []string `json:"extra,omitempty"`
	DifferingCount int      `json:"differing_count"`
	MissingCount   int      `json:"missing_count"`
	ExtraCount     int      `json:"extra_count"`
}

// Bounds of the comparison: leaves compared per document and paths listed
// per output.
const (
	maxLeaves      = 10_000
	maxPathsListed = 20
)

// compareJSON returns nil unless original is a JSON object or array.
func compareJSON(original string, outputs []string) *JSONReport {
	orig, cut, ok := leaves(original)
	if !ok {
		return nil
	}
	r := &JSONReport{FieldsCut: cut, Outputs: make([]JSONOutput, len(outputs))}
	origIndex := make(map[string]string, len(orig))
	for _, l := range orig {
		origIndex[l.path] = l.value
		r.Fields = append(r.Fields, FieldStat{Path: l.path})
	}
	for i, out := range outputs {
		got, _, ok := leaves(out)
		if !ok {
			continue
		}
		r.Parsed++
		o := JSONOutput{Parses: true}
		gotIndex := make(map[string]string, len(got))
		for _, l := range got {
			gotIndex[l.path] = l.value
			if _, inOrig := origIndex[l.path]; !inOrig {
				o.ExtraCount++
				o.Extra = appendListed(o.Extra, l.path)
			}
		}
		for j, l := range orig {
			v, present := gotIndex[l.path]
			switch {
			case !present:
				r.Fields[j].Missing++
				o.MissingCount++
				o.Missing = appendListed(o.Missing, l.path)
			case v != l.value:
				r.Fields[j].Differs++
				o.DifferingCount++
				o.Differing = appendListed(o.Differing, l.path)
			default:
				r.Fields[j].Matches++
			}
		}
		o.Matches = o.DifferingCount == 0 && o.MissingCount == 0 && o.ExtraCount == 0
		r.Outputs[i] = o
	}
	return r
}

func appendListed(list []string, path string) []string {
	if len(list) < maxPathsListed {
		return append(list, path)
	}
	return list
}

type leaf struct{ path, value string }

// codeFence matches a whole output wrapped in one Markdown code block, as
// models often wrap JSON.
var codeFence = regexp.MustCompile("(?s)^```[a-zA-Z]*\\s*\\n(.*?)\\n?```$")

// leaves parses text as a JSON object or array and returns its leaves
// (object keys sorted) with a canonical value each (numbers compared by value,
// strings and literals by their JSON form; empty objects and arrays are
// leaves too). cut is set when there were more than maxLeaves.
func leaves(text string) (out []leaf, cut, ok bool) {
	text = strings.TrimSpace(text)
	if m := codeFence.FindStringSubmatch(text); m != nil {
		text = strings.TrimSpace(m[1])
	}
	if text == "" || (text[0] != '{' && text[0] != '[') {
		return nil, false, false
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false, false
	}
	add := func(l leaf) bool {
		if len(out) == maxLeaves {
			cut = true
			return false
		}
		out = append(out, l)
		return true
	}
	var walk func(path string, v any) bool
	walk = func(path string, v any) bool {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 {
				return add(leaf{path, "{}"})
			}
			// Document order is lost in a map; sorted keys make it stable.
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if !walk(path+key(k), x[k]) {
					return false
				}
			}
		case []any:
			if len(x) == 0 {
				return add(leaf{path, "[]"})
			}
			for i, e := range x {
				if !walk(path+"["+strconv.Itoa(i)+"]", e) {
					return false
				}
			}
		default:
			return add(leaf{path, scalar(x)})
		}
		return true
	}
	walk("$", v)
	return out, cut, true
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// key renders an object key as a path step: .name, or ["odd key"].
func key(k string) string {
	if identifier.MatchString(k) {
		return "." + k
	}
	b, _ := json.Marshal(k)
	return "[" + string(b) + "]"
}

func scalar(v any) string {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return x.String()
	case string:
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(x)
		return strings.TrimSuffix(b.String(), "\n")
	}
	return fmt.Sprint(v) // true, false, <nil>
}
