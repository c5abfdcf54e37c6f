// Package distribution measures how a set of replayed outputs relates to
// the output originally recorded: how often the original comes back
// exactly, which distinct outputs occur and how often, where each output
// first diverges from the original (in characters, and in tokens when a
// tokenizer for the model is available), a short diff of the most common
// alternative, and for JSON outputs whether each output parses and which
// fields match the original.
//
// The functions are pure: no I/O, bounded work for any input (invalid
// UTF-8 and NUL bytes included). Their results contain output text; where
// they go is the caller's decision.
package distribution

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Tokenizer splits text into the model's tokens, as byte pieces that join
// to the text. Implementations must be deterministic. A split whose pieces
// do not join to the text gives no token position.
type Tokenizer interface {
	Name() string
	Tokens(text string) []string
}

// SampledSource is Divergence.TokensFrom when the tokens are those the
// provider said it sampled (logprobs).
const SampledSource = "sampled"

// Options tunes Analyze. The zero value is usable.
type Options struct {
	// Tokenizer of the model; nil when none is available, which the report
	// says instead of giving token indexes.
	Tokenizer Tokenizer
	// Sampled are, per output (same order; nil or shorter where unknown),
	// the tokens the provider reported it sampled. They are preferred over
	// the tokenizer's split of an output when they join to its text.
	Sampled [][]string
	// NoTokenizer says why Tokenizer is nil, for the report; empty means
	// NoTokenizerNote.
	NoTokenizer string
	// DiffContext is how many characters of agreeing text the diff shows
	// around the difference. 0 means 24.
	DiffContext int
	// DiffMax bounds each side of the difference shown, in characters.
	// 0 means 120.
	DiffMax int
}

// Report is the distribution of replayed outputs against the original.
type Report struct {
	N              int     `json:"n"`
	ExactMatches   int     `json:"exact_matches"`
	ExactMatchRate float64 `json:"exact_match_rate"` // 0 when N is 0
	// Variants are the distinct outputs, most frequent first (ties: first
	// seen first).
	Variants []Variant `json:"variants"`
	// Outputs follow the order of the outputs given.
	Outputs []Output `json:"outputs"`
	// Tokenizer names the tokenizer used; TokenNote says why token indexes
	// are missing when none was.
	Tokenizer string `json:"tokenizer,omitempty"`
	TokenNote string `json:"token_note,omitempty"`
	// MostCommonAlternative is the diff of the most frequent output that
	// differs from the original; nil when every output matched.
	MostCommonAlternative *Diff `json:"most_common_alternative,omitempty"`
	// JSON compares structured outputs; nil when the original is not JSON.
	JSON *JSONReport `json:"json,omitempty"`
}

// NoTokenizerNote is the report's TokenNote when no tokenizer was given.
const NoTokenizerNote = "no tokenizer is available for this model: divergence is given in characters only"

// Variant is one distinct output.
type Variant struct {
	Text    string `json:"text"`
	Count   int    `json:"count"`
	Matches bool   `json:"matches_original"`
	// Divergence from the original; nil when it matches.
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Output is one replayed output's place in the distribution.
type Output struct {
	Variant    int         `json:"variant"` // index into Report.Variants
	Matches    bool        `json:"matches_original"`
	Divergence *Divergence `json:"divergence,omitempty"`
}

// Divergence is where an output first differs from the original. When one
// is a prefix of the other, it is where the shorter one ends.
type Divergence struct {
	// Char is the index of the first differing character (Unicode code
	// point; each byte of invalid UTF-8 counts as one).
	Char int `json:"char"`
	// Byte is the same position in bytes of the output.
	Byte int `json:"byte"`
	// Token is the index, from 0, of the output's token that holds the
	// first differing byte, Tokens the output's token count: Token equals
	// Tokens when the output ends there. Both nil when the output's tokens
	// are not known (no tokenizer and none sampled).
	Token  *int `json:"token,omitempty"`
	Tokens *int `json:"tokens,omitempty"`
	// TokensFrom says where the tokens came from: the tokenizer's name, or
	// SampledSource.
	TokensFrom string `json:"tokens_from,omitempty"`
}

// String says where the output diverges: "character 19, token 4 of 7
// (o200k_base)", counting from 1; without tokens, the character only.
func (d Divergence) String() string {
	s := fmt.Sprintf("character %d", d.Char+1)
	switch {
	case d.Token == nil:
	case *d.Token == *d.Tokens:
		s += fmt.Sprintf(", after the last of %d tokens (%s)", *d.Tokens, d.TokensFrom)
	default:
		s += fmt.Sprintf(", token %d of %d (%s)", *d.Token+1, *d.Tokens, d.TokensFrom)
	}
	return s
}

// Analyze compares outputs with original.
func Analyze(original string, outputs []string, opts Options) Report {
	if opts.DiffContext <= 0 {
		opts.DiffContext = 24
	}
	if opts.DiffMax <= 0 {
		opts.DiffMax = 120
	}
	r := Report{N: len(outputs), Variants: []Variant{}, Outputs: make([]Output, len(outputs))}
	if opts.Tokenizer != nil {
		r.Tokenizer = opts.Tokenizer.Name()
	} else {
		r.TokenNote = opts.NoTokenizer
		if r.TokenNote == "" {
			r.TokenNote = NoTokenizerNote
		}
	}

	index := map[string]int{} // text → variant
	for i, out := range outputs {
		v, seen := index[out]
		if !seen {
			v = len(r.Variants)
			index[out] = v
			variant := Variant{Text: out, Matches: out == original}
			if !variant.Matches {
				d := divergence(original, out)
				var sampled []string
				if i < len(opts.Sampled) {
					sampled = opts.Sampled[i]
				}
				d.locateToken(original, out, sampled, opts.Tokenizer)
				variant.Divergence = &d
			}
			r.Variants = append(r.Variants, variant)
		}
		r.Variants[v].Count++
		r.Outputs[i].Variant = v
		if r.Variants[v].Matches {
			r.ExactMatches++
		}
	}
	if r.N > 0 {
		r.ExactMatchRate = float64(r.ExactMatches) / float64(r.N)
	}

	// Most frequent first; the sort is stable, so ties keep first-seen order.
	order := make([]int, len(r.Variants))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(r.Variants[b].Count, r.Variants[a].Count) })
	newIndex := make([]int, len(order))
	sorted := make([]Variant, len(order))
	for to, from := range order {
		sorted[to] = r.Variants[from]
		newIndex[from] = to
	}
	r.Variants = sorted
	for i := range r.Outputs {
		v := newIndex[r.Outputs[i].Variant]
		r.Outputs[i] = Output{Variant: v, Matches: sorted[v].Matches, Divergence: sorted[v].Divergence}
	}
	for _, v := range r.Variants {
		if !v.Matches {
			d := diff(original, v.Text, v.Count, opts.DiffContext, opts.DiffMax)
			r.MostCommonAlternative = &d
			break
		}
	}
	r.JSON = compareJSON(original, outputs)
	return r
}

// divergence finds the first character at which out differs from original.
func divergence(original, out string) Divergence {
	var d Divergence
	for d.Byte < len(original) && d.Byte < len(out) {
		r1, n1 := utf8.DecodeRuneInString(original[d.Byte:])
		r2, n2 := utf8.DecodeRuneInString(out[d.Byte:])
		if r1 != r2 || n1 != n2 || original[d.Byte:d.Byte+n1] != out[d.Byte:d.Byte+n2] {
			break
		}
		d.Byte += n1
		d.Char++
	}
	return d
}

// locateToken sets the token position of d in out: the token holding the
// first differing byte (which may lie inside the differing character, when
// a token ends within it), from the sampled tokens if they join to out,
// else from the tokenizer's split.
func (d *Divergence) locateToken(original, out string, sampled []string, tok Tokenizer) {
	switch {
	case sampled != nil && joins(sampled, out):
		d.TokensFrom = SampledSource
	case tok != nil:
		sampled = tok.Tokens(out)
		if !joins(sampled, out) {
			return
		}
		d.TokensFrom = tok.Name()
	default:
		return
	}
	b := d.Byte
	for b < len(original) && b < len(out) && original[b] == out[b] {
		b++
	}
	k, n := TokenAt(sampled, b), len(sampled)
	d.Token, d.Tokens = &k, &n
}

// TokenAt is the index of the token holding byte b of the tokens' joined
// text, or len(tokens) when b is at or past its end.
func TokenAt(tokens []string, b int) int {
	end := 0
	for i, t := range tokens {
		end += len(t)
		if b < end {
			return i
		}
	}
	return len(tokens)
}

// joins reports whether the tokens, joined, are text.
func joins(tokens []string, text string) bool {
	rest := text
	for _, t := range tokens {
		var ok bool
		if rest, ok = strings.CutPrefix(rest, t); !ok {
			return false
		}
	}
	return rest == ""
}
