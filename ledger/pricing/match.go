package pricing

import (
	"regexp"
	"strings"

	"github.com/docketlabs/docket/ledger/pricing/internal/schema"
)

type matchOp uint8

const (
	opEquals matchOp = iota
	opStartsWith
	opEndsWith
	opContains
	opRegex
	opOr
	opAnd
)

// matcher is a compiled schema.Rule. Matching is case-insensitive: names
// arrive lower-cased and literals are lower-cased here, because the source
// writes some IDs with capitals ("MiniMax-M2", "GLM-4.7") while
// instrumentations report them either way.
type matcher struct {
	op   matchOp
	lit  string
	re   *regexp.Regexp
	subs []matcher
}

// compileRule compiles a rule that passed schema.Rule.Validate.
func compileRule(r schema.Rule) (matcher, error) {
	switch {
	case r.Equals != nil:
		return matcher{op: opEquals, lit: strings.ToLower(*r.Equals)}, nil
	case r.StartsWith != nil:
		return matcher{op: opStartsWith, lit: strings.ToLower(*r.StartsWith)}, nil
	case r.EndsWith != nil:
		return matcher{op: opEndsWith, lit: strings.ToLower(*r.EndsWith)}, nil
	case r.Contains != nil:
		return matcher{op: opContains, lit: strings.ToLower(*r.Contains)}, nil
	case r.Regex != nil:
		re, err := regexp.Compile("(?i)" + *r.Regex)
		return matcher{op: opRegex, re: re}, err
	case r.Or != nil:
		subs, err := compileRules(r.Or)
		return matcher{op: opOr, subs: subs}, err
	default:
		subs, err := compileRules(r.And)
		return matcher{op: opAnd, subs: subs}, err
	}
}

func compileRules(rs []schema.Rule) ([]matcher, error) {
	out := make([]matcher, len(rs))
	for i, r := range rs {
		m, err := compileRule(r)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// match reports whether the lower-cased name s satisfies the rule. Regexes
// are unanchored, as in the source (Python re.search).
func (m *matcher) match(s string) bool {
	switch m.op {
	case opEquals:
		return s == m.lit
	case opStartsWith:
		return strings.HasPrefix(s, m.lit)
	case opEndsWith:
		return strings.HasSuffix(s, m.lit)
	case opContains:
		return strings.Contains(s, m.lit)
	case opRegex:
		return m.re.MatchString(s)
	case opOr:
		for i := range m.subs {
			if m.subs[i].match(s) {
				return true
			}
		}
		return false
	default:
		for i := range m.subs {
			if !m.subs[i].match(s) {
				return false
			}
		}
		return true
	}
}
