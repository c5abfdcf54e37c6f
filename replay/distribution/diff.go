package distribution

import (
	"strings"
	"unicode/utf8"
)

// Diff shows where an alternative output departs from the original: the
// agreeing text around the difference and the differing parts, each cut to
// a bounded length.
type Diff struct {
	// Count is how many outputs gave this alternative.
	Count int `json:"count"`
	// At is the character index of the first difference.
	At     int    `json:"at"`
	Before string `json:"before"` // agreeing text just before the difference
	// Original and Alternative are the parts that differ (either may be
	// empty: an insertion or a deletion).
	Original    string `json:"original"`
	Alternative string `json:"alternative"`
	After       string `json:"after"` // agreeing text just after the difference
	// Cut marks where text was left out: before Before, inside Original or
	// Alternative, after After.
	BeforeCut      bool `json:"before_cut,omitempty"`
	OriginalCut    bool `json:"original_cut,omitempty"`
	AlternativeCut bool `json:"alternative_cut,omitempty"`
	AfterCut       bool `json:"after_cut,omitempty"`
}

// String renders the diff on one line, word-diff style:
// "…agreeing [-original-]{+alternative+} agreeing…".
func (d Diff) String() string {
	var b strings.Builder
	if d.BeforeCut {
		b.WriteString("…")
	}
	b.WriteString(d.Before)
	b.WriteString("[-" + d.Original)
	if d.OriginalCut {
		b.WriteString("…")
	}
	b.WriteString("-]{+" + d.Alternative)
	if d.AlternativeCut {
		b.WriteString("…")
	}
	b.WriteString("+}" + d.After)
	if d.AfterCut {
		b.WriteString("…")
	}
	return b.String()
}

// diff compares original with alt: the common prefix and, after it, the
// common suffix frame the differing middle parts.
func diff(original, alt string, count, context, max int) Diff {
	p := divergence(original, alt)
	origRest, altRest := original[p.Byte:], alt[p.Byte:]
	// Common suffix of what is left, compared character by character.
	s := 0
	for s < len(origRest) && s < len(altRest) {
		r1, n1 := utf8.DecodeLastRuneInString(origRest[:len(origRest)-s])
		r2, n2 := utf8.DecodeLastRuneInString(altRest[:len(altRest)-s])
		if r1 != r2 || n1 != n2 || origRest[len(origRest)-s-n1:len(origRest)-s] != altRest[len(altRest)-s-n2:len(altRest)-s] {
			break
		}
		s += n1
	}
	d := Diff{Count: count, At: p.Char}
	d.Before, d.BeforeCut = lastChars(original[:p.Byte], context)
	d.Original, d.OriginalCut = firstChars(origRest[:len(origRest)-s], max)
	d.Alternative, d.AlternativeCut = firstChars(altRest[:len(altRest)-s], max)
	d.After, d.AfterCut = firstChars(origRest[len(origRest)-s:], context)
	return d
}

// firstChars returns the first n characters of s and whether s was longer.
func firstChars(s string, n int) (string, bool) {
	i := 0
	for c := 0; c < n && i < len(s); c++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i], i < len(s)
}

// lastChars returns the last n characters of s and whether s was longer.
func lastChars(s string, n int) (string, bool) {
	i := len(s)
	for c := 0; c < n && i > 0; c++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:], i > 0
}
