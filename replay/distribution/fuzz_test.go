package distribution

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAnalyze checks the report's invariants on any texts, invalid UTF-8
// and NUL bytes included.
func FuzzAnalyze(f *testing.F) {
	f.Add("The refund takes 5 days.", "The refund takes 7 days.", "{\"a\":[1,2]}")
	f.Add("héllo\x00", "h\xffllo", "```json\n{}\n```")
	f.Add("", "a", "[")
	f.Fuzz(func(t *testing.T, orig, a, b string) {
		outputs := []string{a, orig, b, a}
		for _, tok := range []Tokenizer{nil, words{}} {
			r := Analyze(orig, outputs, Options{Tokenizer: tok})
			total, exact := 0, 0
			for _, v := range r.Variants {
				total += v.Count
				if v.Matches != (v.Text == orig) {
					t.Fatalf("variant %q matches=%v", v.Text, v.Matches)
				}
				if v.Matches {
					exact += v.Count
					continue
				}
				d := v.Divergence
				// The texts agree before the divergence and differ at it.
				if d.Byte > len(orig) || d.Byte > len(v.Text) || orig[:d.Byte] != v.Text[:d.Byte] {
					t.Fatalf("divergence %+v of %q against %q", d, v.Text, orig)
				}
				if d.Byte < len(orig) && d.Byte < len(v.Text) && firstRune(orig[d.Byte:]) == firstRune(v.Text[d.Byte:]) {
					t.Fatalf("texts agree at divergence %+v: %q / %q", d, v.Text, orig)
				}
				if d.Char != utf8.RuneCountInString(orig[:d.Byte]) {
					t.Fatalf("char %d for byte %d", d.Char, d.Byte)
				}
				if (tok == nil) != (d.Token == nil) {
					t.Fatalf("token index %v with tokenizer %v", d.Token, tok)
				}
			}
			if total != r.N || exact != r.ExactMatches || r.ExactMatches < 1 {
				t.Fatalf("counts %d/%d, exact %d/%d", total, r.N, exact, r.ExactMatches)
			}
			for i := 1; i < len(r.Variants); i++ {
				if r.Variants[i].Count > r.Variants[i-1].Count {
					t.Fatalf("variants not sorted: %+v", r.Variants)
				}
			}
			for i, o := range r.Outputs {
				if r.Variants[o.Variant].Text != outputs[i] {
					t.Fatalf("output %d points at %q", i, r.Variants[o.Variant].Text)
				}
			}
			if alt := r.MostCommonAlternative; alt != nil {
				// Before + Original + After are taken from the original text.
				if !strings.Contains(orig, alt.Before) || !strings.Contains(orig, alt.After) || !strings.Contains(orig, alt.Original) {
					t.Fatalf("diff %+v not from %q", alt, orig)
				}
			}
		}
	})
}

func firstRune(s string) string {
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}
