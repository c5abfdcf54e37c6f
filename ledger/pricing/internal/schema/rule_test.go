package schema

import (
	"strings"
	"testing"
)

func TestRuleValidate(t *testing.T) {
	s := func(v string) *string { return &v }
	ok := []Rule{
		{Equals: s("gpt-4o")},
		{Or: []Rule{{StartsWith: s("a")}, {And: []Rule{{Contains: s("b")}, {EndsWith: s("c")}}}}},
		{Regex: s(`^grok-4\.3-\d{8}$`)},
	}
	for _, r := range ok {
		if err := r.Validate(); err != nil {
			t.Errorf("%+v: %v", r, err)
		}
	}
	deep := Rule{Equals: s("x")}
	for range MaxRuleDepth {
		deep = Rule{Or: []Rule{deep}}
	}
	bad := map[string]Rule{
		"no operation":  {},
		"two":           {Equals: s("a"), Contains: s("a")},
		"empty literal": {StartsWith: s("")},
		"empty or":      {Or: []Rule{}},
		"bad sub-rule":  {And: []Rule{{}}},
		"lookbehind":    {Regex: s("(?<=a)b")},
		"long regex":    {Regex: s(strings.Repeat("a", MaxRegexLen+1))},
		"too deep":      deep,
	}
	for name, r := range bad {
		if err := r.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
