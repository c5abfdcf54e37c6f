package ledger

import "testing"

// Error classes come from structured fields only.
func TestErrorClassFromStructuredFields(t *testing.T) {
	code := func(n int64) *int64 { return &n }
	cases := []struct {
		status, errType string
		http            *int64
		finish          []string
		want            string
	}{
		{StatusError, "", code(429), nil, ErrClassRateLimited},
		{StatusError, "openai.RateLimitError", nil, nil, ErrClassRateLimited},
		{StatusError, "529", nil, nil, ErrClassOverloaded},
		{StatusError, "timeout", nil, nil, ErrClassTimeout},
		{StatusError, "anthropic.AuthenticationError", nil, nil, ErrClassAuth},
		{StatusError, "", code(503), nil, ErrClassProvider},
		{StatusError, "_OTHER", nil, nil, ErrClassOther},
		{StatusOK, "", nil, []string{"content_filter"}, ErrClassContentFilter},
		{StatusOK, "", code(200), []string{"stop"}, ErrClassNone},
	}
	for _, tc := range cases {
		if got := classifyError(tc.status, tc.errType, tc.http, tc.finish); got != tc.want {
			t.Errorf("classify(%q, %q, %v, %v) = %q, want %q", tc.status, tc.errType, tc.http, tc.finish, got, tc.want)
		}
	}
}
