package distribution

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// words is a tokenizer for tests: a token per space-separated word.
type words struct{}

func (words) Name() string                { return "words" }
func (words) Tokens(text string) []string { return strings.SplitAfter(text, " ") }

func TestAnalyzeCounts(t *testing.T) {
	orig := "The refund takes 5 days."
	outputs := []string{
		orig,
		"The refund takes 7 days.",
		orig,
		"Refunds are not available.",
		"The refund takes 7 days.",
		orig,
		"The refund takes 7 days.",
		"The refund takes 5 days.", // the original again
	}
	r := Analyze(orig, outputs, Options{Tokenizer: words{}})
	if r.N != 8 || r.ExactMatches != 4 || r.ExactMatchRate != 0.5 {
		t.Fatalf("n %d exact %d rate %v", r.N, r.ExactMatches, r.ExactMatchRate)
	}
	// Most frequent first; ties would keep first-seen order.
	want := []struct {
		text    string
		count   int
		matches bool
		char    int
		token   int
	}{
		{orig, 4, true, 0, 0},
		{"The refund takes 7 days.", 3, false, 17, 3},
		{"Refunds are not available.", 1, false, 0, 0},
	}
	if len(r.Variants) != len(want) {
		t.Fatalf("%d variants", len(r.Variants))
	}
	for i, w := range want {
		v := r.Variants[i]
		if v.Text != w.text || v.Count != w.count || v.Matches != w.matches {
			t.Errorf("variant %d: %+v", i, v)
		}
		if w.matches != (v.Divergence == nil) {
			t.Errorf("variant %d: divergence %+v", i, v.Divergence)
		}
		if !w.matches && (v.Divergence.Char != w.char || v.Divergence.Byte != w.char || v.Divergence.Token == nil || *v.Divergence.Token != w.token ||
			v.Divergence.TokensFrom != "words") {
			t.Errorf("variant %d: divergence %+v token %v, want char %d token %d", i, v.Divergence, *v.Divergence.Token, w.char, w.token)
		}
	}
	wantVariant := []int{0, 1, 0, 2, 1, 0, 1, 0}
	for i, o := range r.Outputs {
		if o.Variant != wantVariant[i] || o.Matches != (wantVariant[i] == 0) {
			t.Errorf("output %d: %+v", i, o)
		}
	}
	if r.Tokenizer != "words" || r.TokenNote != "" {
		t.Errorf("tokenizer %q note %q", r.Tokenizer, r.TokenNote)
	}
	d := r.MostCommonAlternative
	if d == nil || d.Count != 3 || d.At != 17 || d.Original != "5" || d.Alternative != "7" || d.Before != "The refund takes " || d.After != " days." {
		t.Fatalf("diff %+v", d)
	}
	if s := d.String(); s != "The refund takes [-5-]{+7+} days." {
		t.Errorf("diff renders %q", s)
	}
	if r.JSON != nil {
		t.Errorf("plain text got a JSON report")
	}
}

func TestWithoutTokenizerTheReportSaysSo(t *testing.T) {
	r := Analyze("a b", []string{"a c"}, Options{})
	if r.Tokenizer != "" || r.TokenNote != NoTokenizerNote || r.Variants[0].Divergence.Token != nil {
		t.Errorf("%+v", r)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), `"token":`) || !strings.Contains(string(b), `"token_note":"no tokenizer`) {
		t.Errorf("JSON %s", b)
	}
}

// bytes1 is a tokenizer for tests that splits every byte, as byte-level
// BPE may inside a multi-byte character.
type bytes1 struct{}

func (bytes1) Name() string { return "bytes" }
func (bytes1) Tokens(text string) []string {
	out := make([]string, len(text))
	for i := 0; i < len(text); i++ {
		out[i] = text[i : i+1]
	}
	return out
}

// lossy drops what it cannot split, as a tokenizer might on invalid UTF-8.
type lossy struct{}

func (lossy) Name() string                { return "lossy" }
func (lossy) Tokens(text string) []string { return strings.Fields(text) }

func TestTokenPositions(t *testing.T) {
	cases := []struct {
		name, orig, out string
		tok             Tokenizer
		sampled         []string
		token, tokens   int
		from            string
		noTokenPosition bool
	}{
		{"inside a token", "The refund takes 5 days.", "The refund taken", words{}, nil, 2, 3, "words", false},
		{"at a token's start", "The refund takes 5 days.", "The refund costs", words{}, nil, 2, 3, "words", false},
		{"output ends early", "The refund takes 5 days.", "The refund", words{}, nil, 2, 2, "words", false},
		{"original ends early", "The refund", "The refund takes", words{}, nil, 1, 3, "words", false},
		{"empty output", "abc", "", bytes1{}, nil, 0, 0, "bytes", false},
		{"empty original", "", "ab", bytes1{}, nil, 0, 2, "bytes", false},
		{"multi-byte character split across tokens", "ok 👍", "ok 👎", bytes1{}, nil, 6, 7, "bytes", false},
		{"sampled tokens are preferred", "Hello world", "Hello worm", words{}, []string{"Hel", "lo", " wor", "m"}, 3, 4, SampledSource, false},
		{"sampled tokens that do not join are not used", "Hello world", "Hello worm", words{}, []string{"Hello", " worms"}, 1, 2, "words", false},
		{"sampled tokens without a tokenizer", "Hello world", "Hello worm", nil, []string{"Hello", " worm"}, 1, 2, SampledSource, false},
		{"a split that loses text gives no position", "a  b", "a  c", lossy{}, nil, 0, 0, "", true},
		{"nothing known", "a b", "a c", nil, nil, 0, 0, "", true},
	}
	for _, c := range cases {
		opts := Options{Tokenizer: c.tok}
		if c.sampled != nil {
			opts.Sampled = [][]string{c.sampled}
		}
		d := Analyze(c.orig, []string{c.out}, opts).Variants[0].Divergence
		if c.noTokenPosition {
			if d.Token != nil || d.Tokens != nil || d.TokensFrom != "" {
				t.Errorf("%s: %+v", c.name, d)
			}
			continue
		}
		if d.Token == nil || *d.Token != c.token || *d.Tokens != c.tokens || d.TokensFrom != c.from {
			t.Errorf("%s: %s, want %d of %d from %q", c.name, describe(d), c.token, c.tokens, c.from)
		}
	}
	if r := Analyze("same", []string{"same"}, Options{Tokenizer: words{}}); r.Variants[0].Divergence != nil {
		t.Errorf("equal strings diverge: %+v", r.Variants[0].Divergence)
	}
}

func TestDivergencePositions(t *testing.T) {
	cases := []struct {
		name, orig, out string
		char, byte      int
	}{
		{"first character", "abc", "xbc", 0, 0},
		{"output is a prefix", "abcdef", "abc", 3, 3},
		{"original is a prefix", "abc", "abcdef", 3, 3},
		{"empty output", "abc", "", 0, 0},
		{"multi-byte characters count once", "héllo wörld", "héllo world", 7, 8},
		{"same first byte, different rune", "aé", "aè", 1, 1},
		{"emoji", "ok 👍 done", "ok 👎 done", 3, 3},
		{"invalid UTF-8 bytes count one each", "a\xff\xfeb", "a\xff\xfdb", 2, 2},
		{"NUL", "a\x00b", "a\x00c", 2, 2},
	}
	for _, c := range cases {
		r := Analyze(c.orig, []string{c.out}, Options{})
		d := r.Variants[0].Divergence
		if d == nil || d.Char != c.char || d.Byte != c.byte {
			t.Errorf("%s: %+v, want char %d byte %d", c.name, d, c.char, c.byte)
		}
	}
}

func TestDiffs(t *testing.T) {
	cases := []struct {
		name, orig, alt string
		want            string
	}{
		{"insertion", "Pay within 30 days.", "Pay within 30 calendar days.", "Pay within 30 [--]{+calendar +}days."},
		{"deletion", "Yes, we can.", "Yes.", "Yes[-, we can-]{++}."},
		{"replacement at start", "Hello there", "Goodbye there", "[-Hello-]{+Goodbye+} there"},
		{"suffix does not overlap prefix", "aaa", "aaaa", "aaa[--]{+a+}"},
		{"long context is cut", strings.Repeat("x", 40) + "A" + strings.Repeat("y", 40), strings.Repeat("x", 40) + "B" + strings.Repeat("y", 40),
			"…" + strings.Repeat("x", 24) + "[-A-]{+B+}" + strings.Repeat("y", 24) + "…"},
		{"long difference is cut", "<" + strings.Repeat("o", 200) + ">", "<" + strings.Repeat("n", 200) + ">",
			"<[-" + strings.Repeat("o", 120) + "…-]{+" + strings.Repeat("n", 120) + "…+}>"},
		{"multi-byte context", "ünïcödé: 1", "ünïcödé: 2", "ünïcödé: [-1-]{+2+}"},
	}
	for _, c := range cases {
		r := Analyze(c.orig, []string{c.alt}, Options{})
		if got := r.MostCommonAlternative.String(); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
	if r := Analyze("same", []string{"same", "same"}, Options{}); r.MostCommonAlternative != nil || r.ExactMatchRate != 1 {
		t.Errorf("all matching: %+v", r)
	}
	if r := Analyze("x", nil, Options{}); r.N != 0 || r.ExactMatchRate != 0 || len(r.Variants) != 0 {
		t.Errorf("no outputs: %+v", r)
	}
}

func TestJSONFieldByField(t *testing.T) {
	orig := `{"intent":"refund","order":{"id":42,"items":[{"sku":"A1","qty":1}]},"urgent":false,"note":null}`
	outputs := []string{
		orig,
		// Same values, other key order, number written differently, wrapped in a code fence.
		"```json\n{\"order\":{\"items\":[{\"qty\":1.0,\"sku\":\"A1\"}],\"id\":42},\"note\":null,\"urgent\":false,\"intent\":\"refund\"}\n```",
		`{"intent":"cancel","order":{"id":42,"items":[]},"urgent":false,"note":null,"extra":1}`,
		`The order is 42.`,
		`{"intent":"refund"`,
	}
	r := Analyze(orig, outputs, Options{}).JSON
	if r == nil {
		t.Fatal("no JSON report")
	}
	if r.Parsed != 3 {
		t.Errorf("parsed %d", r.Parsed)
	}
	wantFields := []FieldStat{
		{Path: "$.intent", Matches: 2, Differs: 1},
		{Path: "$.note", Matches: 3},
		{Path: "$.order.id", Matches: 3},
		{Path: "$.order.items[0].qty", Matches: 2, Missing: 1},
		{Path: "$.order.items[0].sku", Matches: 2, Missing: 1},
		{Path: "$.urgent", Matches: 3},
	}
	got, _ := json.Marshal(r.Fields)
	want, _ := json.Marshal(wantFields)
	if string(got) != string(want) {
		t.Errorf("fields\n%s\nwant\n%s", got, want)
	}
	o := r.Outputs
	if !o[0].Matches || !o[1].Matches || !o[1].Parses {
		t.Errorf("equal outputs: %+v %+v", o[0], o[1])
	}
	third := o[2]
	if third.Matches || third.DifferingCount != 1 || third.Differing[0] != "$.intent" || third.MissingCount != 2 ||
		third.ExtraCount != 2 || strings.Join(third.Extra, ",") != "$.extra,$.order.items" {
		t.Errorf("third output %+v", third)
	}
	if o[3].Parses || o[4].Parses {
		t.Errorf("text and broken JSON parse: %+v %+v", o[3], o[4])
	}
	// Odd keys are quoted in paths; scalars and plain text originals get no report.
	odd := Analyze(`{"a.b":[1,{"":true}]}`, []string{`{"a.b":[1,{"":false}]}`}, Options{}).JSON
	if odd.Fields[0].Path != `$["a.b"][0]` || odd.Fields[1].Path != `$["a.b"][1][""]` || odd.Outputs[0].Differing[0] != `$["a.b"][1][""]` {
		t.Errorf("odd keys %+v", odd)
	}
	for _, notStructured := range []string{`42`, `"text"`, `plain`, ``} {
		if Analyze(notStructured, []string{`{}`}, Options{}).JSON != nil {
			t.Errorf("%q got a JSON report", notStructured)
		}
	}
}

func TestJSONBounds(t *testing.T) {
	var b strings.Builder
	b.WriteString("[")
	for i := range maxLeaves + 5 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("1")
	}
	b.WriteString("]")
	big := b.String()
	r := Analyze(big, []string{big, strings.Replace(big, "1", "2", 30)}, Options{}).JSON
	if !r.FieldsCut || len(r.Fields) != maxLeaves || r.Outputs[1].DifferingCount != 30 || len(r.Outputs[1].Differing) != maxPathsListed {
		t.Errorf("cut %v fields %d differing %d listed %d", r.FieldsCut, len(r.Fields), r.Outputs[1].DifferingCount, len(r.Outputs[1].Differing))
	}
	deep := strings.Repeat("[", 5000) + strings.Repeat("]", 5000)
	if r := Analyze(deep, []string{deep}, Options{}).JSON; r == nil || !r.Outputs[0].Matches {
		t.Errorf("deep nesting: %+v", r)
	}
}

func TestTiesKeepFirstSeenOrder(t *testing.T) {
	r := Analyze("a", []string{"c", "b", "b", "c", "a"}, Options{})
	if r.Variants[0].Text != "c" || r.Variants[1].Text != "b" || r.Variants[2].Text != "a" || r.MostCommonAlternative.Alternative != "c" {
		t.Errorf("%+v", r.Variants)
	}
}

func describe(d *Divergence) string {
	if d.Token == nil {
		return "no token position"
	}
	return fmt.Sprintf("token %d of %d from %q", *d.Token, *d.Tokens, d.TokensFrom)
}
