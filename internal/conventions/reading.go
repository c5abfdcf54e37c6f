package conventions

import (
	"encoding/json"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// compiled is the tables above turned into lookups by key ID, built once.
type compiled struct {
	ids map[string]uint16
	// columns[f][c] are family f's keys for column c, its own first; the
	// last family is GenAI.
	columns  [][NumColumns][]ckey
	markers  []familyKey
	kindKey  []int // per family, key ID or -1
	unpriced [][]uint16
	notCall  [][]uint16
	agg      []uint16
	op       uint16
	system   uint16
	model    [2]uint16
	input    [2]uint16
}

type ckey struct {
	Key
	id   uint16
	name string // Name, or Name.Field
}

func newCkey(k Key, id uint16) ckey {
	c := ckey{Key: k, id: id, name: k.Name}
	if k.Field != "" {
		c.name = k.Name + "." + k.Field
	}
	return c
}

type familyKey struct {
	family int
	id     uint16
}

var table = compile()

func compile() *compiled {
	t := &compiled{ids: map[string]uint16{}}
	id := func(name string) uint16 {
		if i, ok := t.ids[name]; ok {
			return i
		}
		i := uint16(len(t.ids))
		t.ids[name] = i
		return i
	}
	all := append(slices.Clip(Families), GenAI)
	t.columns = make([][NumColumns][]ckey, len(all))
	t.kindKey = make([]int, len(all))
	t.notCall = make([][]uint16, len(all))
	t.unpriced = make([][]uint16, len(all))
	for f, fam := range all {
		for c := range NumColumns {
			for _, key := range append(slices.Clip(fam.Columns[c]), Columns[c]...) {
				t.columns[f][c] = append(t.columns[f][c], newCkey(key, id(key.Name)))
				if key.Field != "" && len(Columns[c]) > 0 {
					// The content processor lifts the field to the
					// column's first key (Lift): read it in the same place.
					lifted := Columns[c][0]
					t.columns[f][c] = append(t.columns[f][c], newCkey(lifted, id(lifted.Name)))
				}
			}
		}
		for _, m := range fam.Markers {
			t.markers = append(t.markers, familyKey{f, id(m)})
		}
		t.kindKey[f] = -1
		if fam.KindKey != "" {
			t.kindKey[f] = int(id(fam.KindKey))
		}
		for _, m := range fam.NotCallMarkers {
			t.notCall[f] = append(t.notCall[f], id(m))
		}
		for _, m := range fam.UnpricedWrites {
			t.unpriced[f] = append(t.unpriced[f], id(m))
		}
	}
	for _, m := range AggregateMarkers {
		t.agg = append(t.agg, id(m))
	}
	t.op, t.system = id(OperationName), id(System)
	t.model = [2]uint16{id(RequestModel), id(ResponseModel)}
	t.input = [2]uint16{id(UsageInput), id("gen_ai.usage.prompt_tokens")}
	if len(t.ids) > maxKeys {
		panic("conventions: the tables name more keys than maxKeys")
	}
	return t
}

// maxFound bounds the known attributes one span's reading keeps; a span
// with more keeps the first ones.
const maxFound = 64

// maxKeys bounds the keys the tables name (compile checks it), so that a
// reading finds a key's value by its ID without a search.
const maxKeys = 256

// Reading is what the contract reads of one span: its family and the
// values of the keys it knows, found in one pass over the attributes.
type Reading struct {
	family int
	n      int
	ids    [maxFound]uint16
	vals   [maxFound]pcommon.Value
	// pos[id] is 1 + the index in ids and vals of the key with that ID,
	// 0 when the span does not carry it.
	pos  [maxKeys]uint8
	json []parsed
}

type parsed struct {
	id     uint16
	fields []field
	err    bool
}

// Read reads a span's attributes; scope is its instrumentation scope name.
func Read(scope string, attrs pcommon.Map) *Reading {
	r := &Reading{family: -1}
	r.Reset(scope, attrs)
	return r
}

// Reset makes r the reading of another span, reusing its storage.
func (r *Reading) Reset(scope string, attrs pcommon.Map) {
	for _, id := range r.ids[:r.n] {
		r.pos[id] = 0
	}
	r.family, r.n, r.json = -1, 0, r.json[:0]
	for k, v := range attrs.All() {
		// A key sent twice counts once, as first sent.
		if i, ok := table.ids[k]; ok && r.n < maxFound && r.pos[i] == 0 {
			r.ids[r.n], r.vals[r.n] = i, v
			r.n++
			r.pos[i] = uint8(r.n)
		}
	}
	for f, fam := range Families {
		for _, s := range fam.Scopes {
			if rest, ok := cutPrefix(scope, s); ok && (rest == "" || s[len(s)-1] == '/' || rest[0] == '.' || rest[0] == '/' || rest[0] == '-' || rest[0] == '_') {
				r.family = f
				return
			}
		}
	}
	for _, m := range table.markers {
		if r.hasID(m.id) {
			r.family = m.family
			return
		}
	}
	r.family = len(Families)
}

// Family is the span's family.
func (r *Reading) Family() *Family {
	if r.family < len(Families) {
		return &Families[r.family]
	}
	return &GenAI
}

func (r *Reading) get(id uint16) (pcommon.Value, bool) {
	if i := r.pos[id]; i > 0 {
		return r.vals[i-1], true
	}
	return pcommon.Value{}, false
}

func (r *Reading) hasID(id uint16) bool {
	_, ok := r.get(id)
	return ok
}

// Role is what a span is to the ledger.
type Role uint8

const (
	// RoleOther: no GenAI span the contract knows.
	RoleOther Role = iota
	// RoleCall: one model call.
	RoleCall
	// RoleNotCall: a GenAI span that is never a call: a wrapper, an agent
	// or step, an aggregate, a tool or retrieval.
	RoleNotCall
)

// Classify says what the span named name is and, for a call, the GenAI
// operation its family implies ("" when only gen_ai.operation.name says).
func (r *Reading) Classify(name string) (Role, string) {
	if slices.Contains(NotCallSpanNames, name) {
		return RoleNotCall, ""
	}
	for _, id := range table.agg {
		if r.hasID(id) {
			return RoleNotCall, ""
		}
	}
	for _, id := range table.notCall[r.family] {
		if r.hasID(id) {
			return RoleNotCall, ""
		}
	}
	if kk := table.kindKey[r.family]; kk >= 0 {
		if v, ok := r.get(uint16(kk)); ok {
			var buf [32]byte
			if op, known := r.Family().Kinds[string(lower(buf[:0], v.Str()))]; known {
				if op == "" {
					return RoleNotCall, ""
				}
				return RoleCall, op
			}
		}
	}
	hasModel := r.hasID(table.model[0]) || r.hasID(table.model[1])
	if v, ok := r.get(table.op); ok {
		switch name := v.AsString(); {
		case CallOperations[name]:
			return RoleCall, ""
		case NotCallOperations[name]:
			return RoleNotCall, ""
		case hasModel:
			return RoleCall, ""
		}
		return RoleNotCall, ""
	}
	if r.hasID(table.system) && (hasModel || r.hasID(table.input[0]) || r.hasID(table.input[1])) {
		return RoleCall, ""
	}
	if kk := table.kindKey[r.family]; kk >= 0 && r.hasID(uint16(kk)) {
		return RoleNotCall, ""
	}
	return RoleOther, ""
}

// lower appends s in ASCII lower case to buf: looked up as
// Kinds[string(lower(…))], a kind costs no allocation.
func lower(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

// Found is one column value: the attribute's value, and the key it came
// from.
type Found struct {
	Value pcommon.Value
	Key   Key
	name  string
	// Raw is the JSON of a field (Key.Field set); Value is then empty.
	Raw string
}

// Name is the key the value came from (for a JSON field, Name.Field), for
// issues.
func (f Found) Name() string { return f.name }

// Lookup finds a column's value: the first of the family's keys, then the
// defaults, that the span carries with a non-empty value. bad reports a
// JSON attribute that is not an object.
func (r *Reading) Lookup(c Column) (found Found, ok bool, bad string) {
	streamed := false
	if c == ColResponseModel {
		if s, ok, _ := r.Lookup(ColStream); ok {
			v := s.Val()
			streamed = v.Type() == pcommon.ValueTypeBool && v.Bool() || v.Type() == pcommon.ValueTypeStr && v.Str() == "true"
		}
	}
	keys := table.columns[r.family][c]
	for i := range keys {
		key := &keys[i]
		v, ok := r.get(key.id)
		if !ok || key.NotStreamed && streamed {
			continue
		}
		if key.Field == "" {
			if v.Type() == pcommon.ValueTypeStr && v.Str() == "" {
				continue
			}
			return Found{Value: v, Key: key.Key, name: key.name}, true, ""
		}
		fields, err := r.fields(key.id, v)
		if err {
			bad = key.Name
			continue
		}
		for _, f := range fields {
			if f.key == key.Field && f.raw != "null" && f.raw != `""` {
				return Found{Key: key.Key, name: key.name, Raw: f.raw}, true, bad
			}
		}
	}
	return Found{}, false, bad
}

// MaxJSON bounds the JSON attributes read for a field: a raw response can
// be megabytes, and its identifiers come first.
const MaxJSON = 256 << 10

func (r *Reading) fields(id uint16, v pcommon.Value) ([]field, bool) {
	for _, p := range r.json {
		if p.id == id {
			return p.fields, p.err
		}
	}
	p := parsed{id: id}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		s := v.Str()
		p.err = len(s) > MaxJSON
		if !p.err {
			p.fields, p.err = topLevel(s)
		}
	case pcommon.ValueTypeMap:
		// Some SDKs send the object as a map attribute.
		for k, mv := range v.Map().All() {
			if b, err := json.Marshal(mv.AsRaw()); err == nil {
				p.fields = append(p.fields, field{k, string(b)})
			}
		}
	default:
		p.err = true
	}
	r.json = append(r.json, p)
	return p.fields, p.err
}

// Has reports whether the span carries the attribute key (one the contract
// knows).
func (r *Reading) Has(key string) bool {
	id, ok := table.ids[key]
	return ok && r.hasID(id)
}

// Get is the value of an attribute the contract knows.
func (r *Reading) Get(key string) (pcommon.Value, bool) {
	if id, ok := table.ids[key]; ok {
		return r.get(id)
	}
	return pcommon.Value{}, false
}

// CacheSemantics and ReasoningSemantics are the span's family's token
// semantics on calls to provider.
func (r *Reading) CacheSemantics(provider string) Semantics {
	return r.Family().CacheInInput.For(provider)
}

// ReasoningSemantics is described at CacheSemantics.
func (r *Reading) ReasoningSemantics(provider string) Semantics {
	return r.Family().ReasoningInOutput.For(provider)
}

// Val is the value found: the attribute's, or a JSON field's as a string,
// number, bool or array of strings (anything else: its JSON text).
func (f Found) Val() pcommon.Value {
	if f.Key.Field == "" {
		return f.Value
	}
	v := pcommon.NewValueEmpty()
	if !setJSON(v, f.Raw) {
		v.SetStr(f.Raw)
	}
	return v
}

// UnpricedWrites reports whether the span counts cache writes at a rate the
// price table lacks (Family.UnpricedWrites), and under which key.
func (r *Reading) UnpricedWrites() (string, bool) {
	for i, id := range table.unpriced[r.family] {
		if v, ok := r.get(id); ok && (v.Type() == pcommon.ValueTypeInt && v.Int() > 0 || v.Type() == pcommon.ValueTypeDouble && v.Double() > 0) {
			return r.Family().UnpricedWrites[i], true
		}
	}
	return "", false
}
