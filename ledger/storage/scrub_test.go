package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"Code: 47. DB::Exception: Unknown expression identifier `nosuchcol` in scope SELECT nosuchcol FROM t WHERE s = 'alice@example.com'. (UNKNOWN_IDENTIFIER)",
			"Code: 47. DB::Exception: Unknown expression identifier `nosuchcol` in scope SELECT nosuchcol FROM t WHERE s = '?'. (UNKNOWN_IDENTIFIER)"},
		{`Cannot parse input: expected '"' before: 'secret-row","s":"x"}\n': (at row 1)`, `Cannot parse input: expected '?' before: '?': (at row 1)`},
		{`parsed text: "secret"ERROR`, `parsed text: "?"ERROR`},
		{`s = 'it\'s secret' AND t = 'x'`, `s = '?' AND t = '?'`},
		{`unterminated 'secret to the end`, `unterminated '?'`},
		{`trailing backslash 'secret\`, `trailing backslash '?'`},
		{"no quotes at all", "no quotes at all"},
		{"", ""},
	} {
		if got := Scrub(c.in); got != c.want {
			t.Errorf("Scrub(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

func TestScrubErrorKeepsCancellationOnly(t *testing.T) {
	inner := errors.New("query 'secret' failed")
	err := ScrubError(fmt.Errorf("wrapped: %w", inner))
	if strings.Contains(err.Error(), "secret") || errors.Is(err, inner) {
		t.Fatalf("the original error is still reachable: %v", err)
	}
	if err := ScrubError(fmt.Errorf("query 'secret': %w", context.DeadlineExceeded)); !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "secret") {
		t.Fatalf("deadline: %v", err)
	}
	if ScrubError(nil) != nil {
		t.Fatal("nil became an error")
	}
}

func FuzzScrub(f *testing.F) {
	f.Add("a 'b' \"c\" `d` 'e\\'f' 'g")
	f.Fuzz(func(t *testing.T, msg string) {
		out := Scrub(msg)
		if !strings.ContainsAny(msg, `'"`) && out != msg {
			t.Fatalf("a message without quotes changed: %q -> %q", msg, out)
		}
		// At most '' -> '?' per pair, or ' -> '?' once at the end.
		if len(out) > 3*len(msg) {
			t.Fatalf("scrubbed message grew: %q -> %q", msg, out)
		}
		// Every quoted span left holds only the mask.
		for i := 0; i < len(out); i++ {
			if q := out[i]; q == '\'' || q == '"' {
				if i+2 >= len(out) || out[i+1] != '?' || out[i+2] != q {
					t.Fatalf("quoted text survived at %d: %q -> %q", i, msg, out)
				}
				i += 2
			}
		}
	})
}
