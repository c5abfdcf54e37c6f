package tokenizer

import (
	"slices"
	"strings"
	"testing"

	"github.com/docketlabs/docket/replay/distribution"
)

func TestModelsMapToEncodings(t *testing.T) {
	for _, c := range []struct{ provider, model, want string }{
		{"openai", "gpt-4o-mini-2024-07-18", O200kBase},
		{"openai", "gpt-4o", O200kBase},
		{"openai", "gpt-4.1-nano", O200kBase},
		{"openai", "gpt-5", O200kBase},
		{"openai", "o3-mini", O200kBase},
		{"openai", "o1", O200kBase},
		{"openai", "ft:gpt-4o-mini-2024-07-18:acme::abc123", O200kBase},
		{"azure.ai.openai", "gpt-4o", O200kBase},
		{"openai", "gpt-4-turbo", Cl100kBase},
		{"openai", "gpt-4", Cl100kBase},
		{"openai", "gpt-3.5-turbo-0125", Cl100kBase},
		{"openai", "gpt-40", ""}, // not a family: a prefix must end at a separator
		{"openai", "o10-model", ""},
		{"openai", "davinci-002", ""},
		{"anthropic", "gpt-4o", ""}, // the provider decides whose model it is
		{"anthropic", "claude-sonnet-4-5-20250929", ""},
		{"gcp.gemini", "gemini-2.5-pro", ""},
	} {
		if got := Encoding(c.provider, c.model); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.provider, c.model, got, c.want)
		}
	}
}

func TestFamiliesWithoutATokenizerSaySo(t *testing.T) {
	tok, note := For("anthropic", "claude-sonnet-4-5-20250929")
	if tok != nil || !strings.Contains(note, "no public tokenizer for anthropic models") {
		t.Errorf("anthropic: %v %q", tok, note)
	}
	if _, note := For("<script>", "x"); !strings.Contains(note, "this provider's") {
		t.Errorf("a provider name that is not one is not repeated: %q", note)
	}
	if tok, note := For("openai", "davinci-002"); tok != nil || note == "" {
		t.Errorf("unknown OpenAI model: %v %q", tok, note)
	}
}

// The bundled ranks give tiktoken's published IDs (tiktoken's README and
// test suite: "tiktoken is great!").
func TestBundledRanksMatchTiktoken(t *testing.T) {
	for enc, want := range map[string][]uint{
		O200kBase:  {83, 8251, 2488, 382, 2212, 0},
		Cl100kBase: {83, 1609, 5963, 374, 2294, 0},
	} {
		ids, _, err := codecs[enc].get().Encode("tiktoken is great!")
		if err != nil || !slices.Equal(ids, want) {
			t.Errorf("%s: %v %v, want %v", enc, ids, err, want)
		}
	}
}

func TestDivergenceInTokens(t *testing.T) {
	o200k, _ := For("openai", "gpt-4o-mini")
	cl100k, _ := For("openai", "gpt-4-turbo")
	cases := []struct {
		name          string
		tok           distribution.Tokenizer
		orig, out     string
		char          int
		token, tokens int
	}{
		// The Refund|refund|takes|fifteen|business|days|.
		{"inside a word token", o200k, "The refund takes five business days.", "The refund takes fifteen business days.", 19, 3, 7},
		// C|afé| \xf0\x9f\x8d|\xb5| open: the emojis share their first three
		// bytes, so the first differing byte is in the 4th token.
		{"inside a character split across tokens", o200k, "Café 🍔 open", "Café 🍵 open", 5, 3, 5},
		{"cl100k splits the same text otherwise", cl100k, "Café 🍔 open", "Café 🍵 open", 5, 5, 7},
		{"CJK", o200k, "你好，朋友", "你好，世界", 3, 2, 3},
		{"output ends", o200k, "The refund takes five business days.", "The refund", 10, 2, 2},
		{"empty output", o200k, "abc", "", 0, 0, 0},
		{"empty original", o200k, "", "Hello", 0, 0, 1},
	}
	for _, c := range cases {
		r := distribution.Analyze(c.orig, []string{c.out}, distribution.Options{Tokenizer: c.tok})
		d := r.Variants[0].Divergence
		if d == nil || d.Char != c.char || d.Token == nil || *d.Token != c.token || *d.Tokens != c.tokens || d.TokensFrom != c.tok.Name() {
			t.Errorf("%s: %+v", c.name, d)
			if d != nil && d.Token != nil {
				t.Logf("token %d of %d (%q)", *d.Token, *d.Tokens, c.tok.Tokens(c.out))
			}
		}
	}
	if r := distribution.Analyze("same", []string{"same"}, distribution.Options{Tokenizer: o200k}); r.Variants[0].Divergence != nil {
		t.Errorf("equal strings: %+v", r.Variants[0].Divergence)
	}
	// Invalid UTF-8 does not split back into its bytes: no token position,
	// the characters stay.
	d := distribution.Analyze("a\xffb", []string{"a\xffc"}, distribution.Options{Tokenizer: o200k}).Variants[0].Divergence
	if d.Char != 2 || d.Token != nil {
		t.Errorf("invalid UTF-8: %+v", d)
	}
	if toks := o200k.Tokens(strings.Repeat("a", MaxText+1)); toks != nil {
		t.Errorf("text over the bound was split into %d tokens", len(toks))
	}
}

// FuzzTokens: a token position, when given, is right for any texts. The
// library's split does not always give the text back (invalid UTF-8 comes
// back as U+FFFD, and a lone "\x7f" is dropped): then no position is given.
func FuzzTokens(f *testing.F) {
	f.Add("The refund takes 5 days.", "The refund takes 7 days.")
	f.Add("Café 🍔 open\n\n  你好", "Café 🍵 open\n\n  你好")
	f.Add("", "\x7f")
	o200k, _ := For("openai", "gpt-4o")
	f.Fuzz(func(t *testing.T, orig, out string) {
		if len(orig) > 4096 || len(out) > 4096 || orig == out {
			return
		}
		d := distribution.Analyze(orig, []string{out}, distribution.Options{Tokenizer: o200k}).Variants[0].Divergence
		if d.Token == nil {
			return
		}
		toks := o200k.Tokens(out)
		if strings.Join(toks, "") != out || *d.Tokens != len(toks) {
			t.Fatalf("position %d of %d from a split %q of %q", *d.Token, *d.Tokens, toks, out)
		}
		b := d.Byte
		for b < len(orig) && b < len(out) && orig[b] == out[b] {
			b++
		}
		start := len(strings.Join(toks[:*d.Token], ""))
		if *d.Token == len(toks) && start != b || *d.Token < len(toks) && (start > b || start+len(toks[*d.Token]) <= b) {
			t.Fatalf("token %d (from byte %d) does not hold byte %d: %q vs %q", *d.Token, start, b, orig, out)
		}
	})
}

// A long run of whitespace and a long output stay fast enough to split
// (the split is a backtracking regexp).
func BenchmarkTokensLong(b *testing.B) {
	o200k, _ := For("openai", "gpt-4o")
	text := strings.Repeat("The refund takes five business days. ", 5000) + strings.Repeat(" ", 50000)
	for b.Loop() {
		o200k.Tokens(text[:min(len(text), MaxText)])
	}
}
