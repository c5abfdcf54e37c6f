package fakeprovider

import (
	"unicode"
	"unicode/utf8"
)

// Token counts only need to behave like real ones (longer text, more tokens;
// a word is about one token), not match any vendor's tokenizer. The rules
// below approximate a BPE vocabulary: a word takes its leading space, letters
// come in pieces of up to 8, digits in groups of up to 3, and every other
// character is a token of its own.
const (
	maxLettersPerToken = 8
	maxDigitsPerToken  = 3
)

// tokenLen returns the byte length of the first token of s (s not empty).
func tokenLen(s string) int {
	lead := 0
	if s[0] == ' ' && len(s) > 1 {
		lead = 1
	}
	r, size := utf8.DecodeRuneInString(s[lead:])
	switch {
	case unicode.IsLetter(r):
		return lead + runLen(s[lead:], unicode.IsLetter, maxLettersPerToken)
	case unicode.IsDigit(r):
		return lead + runLen(s[lead:], unicode.IsDigit, maxDigitsPerToken)
	default:
		return lead + size
	}
}

// runLen returns the byte length of the longest prefix of s made of at most
// limit runes that all satisfy in. The first rune of s must satisfy in.
func runLen(s string, in func(rune) bool, limit int) int {
	n := 0
	for count := 0; n < len(s) && count < limit; count++ {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !in(r) {
			break
		}
		n += size
	}
	return n
}

// countTokens returns the number of tokens in s.
func countTokens(s string) int {
	n := 0
	for len(s) > 0 {
		s = s[tokenLen(s):]
		n++
	}
	return n
}

// splitTokens cuts s into tokens; joining them gives s back.
func splitTokens(s string) []string {
	var out []string
	for len(s) > 0 {
		n := tokenLen(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// truncateTokens returns the first max tokens of s.
func truncateTokens(s string, max int) string {
	end := 0
	for i := 0; i < max && end < len(s); i++ {
		end += tokenLen(s[end:])
	}
	return s[:end]
}

// OpenAI's documented accounting for chat input: every message costs a few
// tokens of framing on top of its content, and the reply is primed with a
// few more.
const (
	tokensPerMessage = 3
	tokensPerName    = 1
	tokensForReply   = 3
)

func messageTokens(m Message) int {
	n := tokensPerMessage + countTokens(m.Text)
	if m.Name != "" {
		n += tokensPerName + countTokens(m.Name)
	}
	return n
}

func promptTokens(msgs []Message) int {
	n := tokensForReply
	for _, m := range msgs {
		n += messageTokens(m)
	}
	return n
}
