package conventions

import (
	"encoding/json"
	"math"

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
		putJSON(attrs, dst, f.Raw)
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

// putJSON sets key to a JSON scalar or array of strings; other values are
// not metadata and are left.
func putJSON(attrs pcommon.Map, key string, raw json.RawMessage) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	switch t := v.(type) {
	case string:
		attrs.PutStr(key, t)
	case bool:
		attrs.PutBool(key, t)
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1<<53 {
			attrs.PutInt(key, int64(t))
		} else {
			attrs.PutDouble(key, t)
		}
	case []any:
		s := attrs.PutEmptySlice(key)
		for _, e := range t {
			if str, ok := e.(string); ok {
				s.AppendEmpty().SetStr(str)
			}
		}
	}
}
