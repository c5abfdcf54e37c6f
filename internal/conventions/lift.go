package conventions

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// Lift copies the metadata a family keeps inside a content attribute (the
// model, sampling parameters and stream flag in OpenInference's
// llm.invocation_parameters, the response ID and model in its output.value)
// to the columns' first keys (gen_ai.request.model, gen_ai.response.id, …),
// where absent. The content processor calls it before it moves content away,
// so the ledger still finds them. scope is the span's instrumentation scope.
func Lift(scope string, attrs pcommon.Map, content string) {
	if !liftable[content] {
		return
	}
	var r Reading
	r.Reset(scope, attrs)
	for c := range NumColumns {
		if len(Columns[c]) == 0 || !r.fieldOf(c, content) {
			continue
		}
		dst := Columns[c][0].Name
		if _, ok := attrs.Get(dst); ok {
			continue
		}
		f, ok, _ := r.Lookup(c)
		if !ok || f.Key.Name != content {
			continue
		}
		if v := pcommon.NewValueEmpty(); setJSON(v, f.Raw) {
			v.CopyTo(attrs.PutEmpty(dst))
		}
	}
}

// liftable are the attributes some family reads fields of.
var liftable = func() map[string]bool {
	m := map[string]bool{}
	for _, f := range append(Families, GenAI) {
		for _, ks := range f.Columns {
			for _, k := range ks {
				if k.Field != "" {
					m[k.Name] = true
				}
			}
		}
	}
	return m
}()

func (r *Reading) fieldOf(c Column, content string) bool {
	for _, key := range table.columns[r.family][c] {
		if key.Name == content && key.Field != "" {
			return true
		}
	}
	return false
}

// setJSON sets v to a JSON scalar or array of strings and reports whether
// raw was one; other values are not metadata.
func setJSON(v pcommon.Value, raw string) bool {
	switch {
	case raw == "true" || raw == "false":
		v.SetBool(raw == "true")
	case strings.HasPrefix(raw, `"`) && !strings.Contains(raw, `\`):
		v.SetStr(raw[1 : len(raw)-1])
	case strings.HasPrefix(raw, `"`):
		var s string
		if json.Unmarshal([]byte(raw), &s) != nil {
			return false
		}
		v.SetStr(s)
	case strings.HasPrefix(raw, "["):
		var list []string
		if json.Unmarshal([]byte(raw), &list) != nil {
			return false
		}
		sl := v.SetEmptySlice()
		for _, e := range list {
			sl.AppendEmpty().SetStr(e)
		}
	default:
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			v.SetInt(n)
			return true
		}
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		v.SetDouble(f)
	}
	return true
}
