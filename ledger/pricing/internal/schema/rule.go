package schema

import (
	"errors"
	"fmt"
	"regexp"
)

// MaxRuleDepth bounds the nesting of or/and clauses (the source uses 2).
const MaxRuleDepth = 8

// MaxRegexLen bounds a regex clause (the source's longest is under 50).
const MaxRegexLen = 512

// Validate checks that every clause sets exactly one operation, that
// literals are not empty, and that regexes compile as RE2.
func (r Rule) Validate() error { return r.validate(1) }

func (r Rule) validate(depth int) error {
	if depth > MaxRuleDepth {
		return fmt.Errorf("match rule nested deeper than %d", MaxRuleDepth)
	}
	set := 0
	for _, p := range []*string{r.Equals, r.StartsWith, r.EndsWith, r.Contains, r.Regex} {
		if p != nil {
			set++
			if *p == "" {
				return errors.New("match rule with an empty string")
			}
		}
	}
	for _, list := range [][]Rule{r.Or, r.And} {
		if list == nil {
			continue
		}
		set++
		if len(list) == 0 {
			return errors.New("match rule with an empty or/and list")
		}
		for _, sub := range list {
			if err := sub.validate(depth + 1); err != nil {
				return err
			}
		}
	}
	if set != 1 {
		return fmt.Errorf("match rule must set exactly one of equals, starts_with, ends_with, contains, regex, or, and (has %d)", set)
	}
	if r.Regex != nil {
		if len(*r.Regex) > MaxRegexLen {
			return fmt.Errorf("match regex longer than %d bytes", MaxRegexLen)
		}
		if _, err := regexp.Compile(*r.Regex); err != nil {
			return fmt.Errorf("match regex: %w", err)
		}
	}
	return nil
}
