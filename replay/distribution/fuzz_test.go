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
				if (tok == nil) != (d.Token == nil) || (d.Token == nil) != (d.Tokens == nil) {
					t.Fatalf("token index %v of %v with tokenizer %v", d.Token, d.Tokens, tok)
				}
				if d.Token != nil {
					b := d.Byte
					for b < len(orig) && b < len(v.Text) && orig[b] == v.Text[b] {
						b++
					}
					checkTokenPosition(t, tok.Tokens(v.Text), *d.Token, *d.Tokens, b)
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

// checkTokenPosition: token k of n holds byte b of the joined tokens (k = n
// when b is their end), so the tokens before k lie before b.
func checkTokenPosition(t *testing.T, tokens []string, k, n, b int) {
	t.Helper()
	if n != len(tokens) || k < 0 || k > n {
		t.Fatalf("token %d of %d, %d tokens", k, n, len(tokens))
	}
	before := len(strings.Join(tokens[:k], ""))
	if k == n {
		if before != b {
			t.Fatalf("token %d of %d: byte %d is not the end (%d)", k, n, b, before)
		}
		return
	}
	if before > b || before+len(tokens[k]) <= b {
		t.Fatalf("token %d spans bytes [%d,%d), not %d", k, before, before+len(tokens[k]), b)
	}
}

// FuzzTokenAt: the token found holds the byte, for any split of any text.
func FuzzTokenAt(f *testing.F) {
	f.Add("héllo wörld", 3, 7)
	f.Add("", 0, 0)
	f.Add("👍👎", 1, 5)
	f.Fuzz(func(t *testing.T, text string, cut, b int) {
		if b < 0 || b > len(text) {
			return
		}
		// Split text into pieces of 1..4 bytes, cut choosing the sizes;
		// pieces may split a character, as byte-level BPE does.
		var tokens []string
		for i := 0; i < len(text); {
			n := min(1+abs(cut+i)%4, len(text)-i)
			tokens = append(tokens, text[i:i+n])
			i += n
		}
		checkTokenPosition(t, tokens, TokenAt(tokens, b), len(tokens), b)
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
