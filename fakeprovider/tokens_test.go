package fakeprovider

import (
	"slices"
	"testing"
)

func TestSplitTokens(t *testing.T) {
	for in, want := range map[string][]string{
		"":                     nil,
		"Hello world":          {"Hello", " world"},
		"internationalization": {"internat", "ionaliza", "tion"},
		"call 5551234, ok?":    {"call", " 555", "123", "4", ",", " ok", "?"},
		"a  b\n":               {"a", "  ", "b", "\n"},
		"naïve café":           {"naïve", " café"},
		"\xff\x00x":            {"\xff", "\x00", "x"},
	} {
		if got := splitTokens(in); !slices.Equal(got, want) {
			t.Errorf("splitTokens(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPromptTokensCountFraming(t *testing.T) {
	msgs := []Message{{Role: "system", Text: "Be brief."}, {Role: "user", Name: "ann", Text: "Hello there"}}
	// 3 for the reply, 3 per message, 1+1 for the name, content tokens.
	want := 3 + (3 + 3) + (3 + 1 + 1 + 2)
	if got := promptTokens(msgs); got != want {
		t.Errorf("promptTokens = %d, want %d", got, want)
	}
}
