package ledger

import (
	"strconv"
	"strings"
)

// Error classes. They come from structured fields only (span status, HTTP
// status, error.type, finish reasons) — never from messages or model output,
// where a number such as "429" in prose would misclassify a call.
const (
	ErrClassNone           = ""
	ErrClassRateLimited    = "rate_limited"
	ErrClassOverloaded     = "overloaded"
	ErrClassTimeout        = "timeout"
	ErrClassAuth           = "auth"
	ErrClassInvalidRequest = "invalid_request"
	ErrClassContextLength  = "context_length"
	ErrClassContentFilter  = "content_filter"
	ErrClassProvider       = "provider_error"
	ErrClassCancelled      = "cancelled"
	ErrClassOther          = "other"
)

// errorTypeClasses maps normalized error.type tokens (class names such as
// RateLimitError, or codes such as rate_limit_exceeded) to classes. Checked in
// order; the first token found in the normalized type wins.
var errorTypeClasses = []struct{ token, class string }{
	{"ratelimit", ErrClassRateLimited},
	{"toomanyrequests", ErrClassRateLimited},
	{"quota", ErrClassRateLimited},
	{"overload", ErrClassOverloaded},
	{"timeout", ErrClassTimeout},
	{"deadline", ErrClassTimeout},
	{"cancel", ErrClassCancelled},
	{"authentication", ErrClassAuth},
	{"permission", ErrClassAuth},
	{"unauthorized", ErrClassAuth},
	{"forbidden", ErrClassAuth},
	{"contextlength", ErrClassContextLength},
	{"contentfilter", ErrClassContentFilter},
	{"badrequest", ErrClassInvalidRequest},
	{"invalidrequest", ErrClassInvalidRequest},
	{"notfound", ErrClassInvalidRequest},
	{"unprocessable", ErrClassInvalidRequest},
	{"internalserver", ErrClassProvider},
	{"serviceunavailable", ErrClassProvider},
	{"apierror", ErrClassProvider},
	{"apiconnection", ErrClassProvider},
}

func classifyError(status, errorType string, httpStatus *int64, finishReasons []string) string {
	failed := status == StatusError || errorType != "" || (httpStatus != nil && *httpStatus >= 400)
	if !failed {
		for _, r := range finishReasons {
			if r == "content_filter" {
				return ErrClassContentFilter
			}
		}
		return ErrClassNone
	}
	if c := classifyHTTP(httpStatus); c != "" {
		return c
	}
	if n, err := strconv.Atoi(errorType); err == nil {
		code := int64(n)
		if c := classifyHTTP(&code); c != "" {
			return c
		}
	}
	norm := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return -1
	}, errorType)
	for _, tc := range errorTypeClasses {
		if strings.Contains(norm, tc.token) {
			return tc.class
		}
	}
	return ErrClassOther
}

func classifyHTTP(code *int64) string {
	if code == nil {
		return ""
	}
	switch c := *code; {
	case c == 429:
		return ErrClassRateLimited
	case c == 529:
		return ErrClassOverloaded
	case c == 408 || c == 504:
		return ErrClassTimeout
	case c == 401 || c == 403:
		return ErrClassAuth
	case c == 413:
		return ErrClassContextLength
	case c >= 400 && c < 500:
		return ErrClassInvalidRequest
	case c >= 500:
		return ErrClassProvider
	}
	return ""
}
