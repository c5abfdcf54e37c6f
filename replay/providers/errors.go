package providers

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// APIError is an error answer of a provider. It keeps the provider's
// status, type, code and parameter, never its message: messages can quote
// the request.
type APIError struct {
	API       API
	Status    int    // HTTP status (for an error event inside a stream, the status its type stands for)
	Type      string // e.g. invalid_request_error, rate_limit_error, overloaded_error
	Code      string // OpenAI's code, e.g. unsupported_parameter
	Param     string // OpenAI's param, e.g. temperature
	RequestID string

	retryAfter time.Duration
	// mentioned lists the request's sampling parameters (wire names) that
	// the message named, in the order it named them.
	mentioned []string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "providers: %s: status %d", e.API, e.Status)
	for _, kv := range [][2]string{{"type", e.Type}, {"code", e.Code}, {"param", e.Param}, {"request_id", e.RequestID}} {
		if kv[1] != "" {
			fmt.Fprintf(&b, " %s=%s", kv[0], kv[1])
		}
	}
	return b.String()
}

// Temporary reports whether another attempt may succeed: rate limits,
// overload, server errors and timeouts.
func (e *APIError) Temporary() bool {
	switch e.Status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooManyRequests,
		http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable,
		http.StatusGatewayTimeout, statusOverloaded:
		return true
	}
	return false
}

// RetryAfter is the wait the provider asked for; 0 if it did not.
func (e *APIError) RetryAfter() time.Duration { return e.retryAfter }

// statusOverloaded is Anthropic's "overloaded" status.
const statusOverloaded = 529

// streamErrorStatus maps the error type of an error event inside a stream
// (the HTTP status was already 200) to the status it stands for.
func streamErrorStatus(typ string) int {
	switch typ {
	case "overloaded_error":
		return statusOverloaded
	case "rate_limit_error", "rate_limit_exceeded", "requests", "tokens":
		return http.StatusTooManyRequests
	case "invalid_request_error":
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// retryAfter reads retry-after-ms (OpenAI) or Retry-After in seconds or as
// an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms > 0 && ms < 1e9 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > 1e6 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// mentions returns the names among candidates that message names as a
// parameter — `name`, 'name', "name", or "name:" at the start — in the
// order they first appear.
func mentions(message string, candidates []string) []string {
	type hit struct {
		name string
		at   int
	}
	var hits []hit
	for _, name := range candidates {
		at := -1
		for _, q := range []string{"`" + name + "`", "'" + name + "'", `"` + name + `"`} {
			if i := strings.Index(message, q); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if strings.HasPrefix(message, name+":") {
			at = 0
		}
		if at >= 0 {
			hits = append(hits, hit{name, at})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return a.at - b.at })
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.name
	}
	return out
}

// transportError is a failure to get an answer at all: the connection, a
// timeout, or a stream that ended before its final event. Another attempt
// may succeed.
type transportError struct {
	api API
	op  string
	err error
}

func (e *transportError) Error() string {
	return fmt.Sprintf("providers: %s: %s: %v", e.api, e.op, e.err)
}

func (e *transportError) Unwrap() error { return e.err }

func (e *transportError) Temporary() bool {
	return !errors.Is(e.err, context.Canceled)
}

func (e *transportError) RetryAfter() time.Duration { return 0 }

// ErrBadResponse marks an answer that is not in the API's format.
var ErrBadResponse = errors.New("providers: answer is not in the API's format")
