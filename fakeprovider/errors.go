package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// APIError is an error the server answers with. The OpenAI APIs send it in
// OpenAI's error format:
//
//	{"error": {"message": "…", "type": "…", "param": null, "code": "…"}}
//
// and the Anthropic Messages API in Anthropic's:
//
//	{"type": "error", "error": {"type": "overloaded_error", "message": "…"}, "request_id": "req_…"}
//
// The constructors below (RateLimited, ServerError, Overloaded,
// UnsupportedParameter) make errors that each API words as that provider
// does; an APIError built by hand is sent with its fields as they are (for
// Anthropic, the error type follows from Status).
type APIError struct {
	Status     int    // HTTP status
	Type       string // e.g. "invalid_request_error", "server_error", "requests"
	Code       string // e.g. "rate_limit_exceeded"; empty is sent as null
	Param      string // the offending parameter; empty is sent as null
	Message    string
	RetryAfter time.Duration // sent as a Retry-After header (whole seconds) when > 0

	kind errorKind // what happened, for APIs that word it differently
}

// errorKind is what an error from a constructor means, whatever API sends it.
type errorKind int

const (
	kindAsIs errorKind = iota
	kindRateLimited
	kindServerError
	kindOverloaded
	kindUnsupportedParameter
)

func (e *APIError) Error() string {
	return fmt.Sprintf("fakeprovider: %d %s %s", e.Status, e.Type, e.Code)
}

// RateLimited is OpenAI's answer to a request over the requests-per-minute limit.
func RateLimited(retryAfter time.Duration) *APIError {
	return &APIError{
		Status:     http.StatusTooManyRequests,
		Type:       "requests",
		Code:       "rate_limit_exceeded",
		Message:    fmt.Sprintf("Rate limit reached for requests per min (RPM). Please try again in %ds.", ceilSeconds(retryAfter)),
		RetryAfter: retryAfter,
		kind:       kindRateLimited,
	}
}

// ServerError is OpenAI's generic 500.
func ServerError() *APIError {
	return &APIError{
		Status:  http.StatusInternalServerError,
		Type:    "server_error",
		Message: "The server had an error while processing your request. Sorry about that!",
		kind:    kindServerError,
	}
}

// Overloaded is the answer when the provider has no capacity: OpenAI's 503,
// Anthropic's 529 overloaded_error.
func Overloaded() *APIError {
	return &APIError{
		Status:  http.StatusServiceUnavailable,
		Type:    "server_error",
		Message: "The engine is currently overloaded, please try again later.",
		kind:    kindOverloaded,
	}
}

// UnsupportedParameter is a 400 rejecting a sampling parameter the model does
// not accept, as newer models reject temperature. param is the name in
// Params (temperature, top_p, top_k, max_tokens, seed, stop); each API
// names it as its request does (max_tokens is max_output_tokens in the
// Responses API, stop is stop_sequences in the Messages API).
func UnsupportedParameter(param string) *APIError {
	return &APIError{
		Status:  http.StatusBadRequest,
		Type:    "invalid_request_error",
		Code:    "unsupported_parameter",
		Param:   param,
		Message: fmt.Sprintf("Unsupported parameter: '%s' is not supported with this model.", param),
		kind:    kindUnsupportedParameter,
	}
}

// BadRequest is a 400 invalid_request_error about one parameter, the way
// OpenAI rejects parameter values.
func BadRequest(param, code, message string) *APIError {
	return &APIError{
		Status:  http.StatusBadRequest,
		Type:    "invalid_request_error",
		Param:   param,
		Code:    code,
		Message: message,
	}
}

func modelNotFound(model string) *APIError {
	return &APIError{
		Status:  http.StatusNotFound,
		Type:    "invalid_request_error",
		Code:    "model_not_found",
		Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model),
	}
}

func invalidURL(r *http.Request) *APIError {
	return &APIError{
		Status:  http.StatusNotFound,
		Type:    "invalid_request_error",
		Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path),
	}
}

func unauthorized(message string) *APIError {
	return &APIError{
		Status:  http.StatusUnauthorized,
		Type:    "invalid_request_error",
		Code:    "invalid_api_key",
		Message: message,
	}
}

// write sends e as OpenAI does. wireName renames a Params field to the
// request field of the API at hand; nil keeps the names.
func (e *APIError) write(w http.ResponseWriter, wireName func(string) string) {
	if e.kind == kindUnsupportedParameter && wireName != nil {
		e = UnsupportedParameter(wireName(e.Param))
	}
	body := struct {
		Error struct {
			Message string  `json:"message"`
			Type    string  `json:"type"`
			Param   *string `json:"param"`
			Code    *string `json:"code"`
		} `json:"error"`
	}{}
	body.Error.Message = e.Message
	body.Error.Type = e.Type
	body.Error.Param = nullIfEmpty(e.Param)
	body.Error.Code = nullIfEmpty(e.Code)
	e.writeRetryAfter(w)
	writeJSON(w, e.Status, body)
}

func (e *APIError) writeRetryAfter(w http.ResponseWriter) {
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ceilSeconds(e.RetryAfter)))
	}
}

// statusOverloaded is Anthropic's status for "overloaded", not a standard
// HTTP code.
const statusOverloaded = 529

// anthropic returns e as the Anthropic API words it: status, error type and
// message. wireName renames a Params field to the Messages API's name.
func (e *APIError) anthropic(wireName func(string) string) (status int, typ, message string) {
	switch e.kind {
	case kindRateLimited:
		return http.StatusTooManyRequests, "rate_limit_error",
			"This request would exceed the rate limit for your organization of requests per minute. Please try again later."
	case kindServerError:
		return http.StatusInternalServerError, "api_error", "Internal server error"
	case kindOverloaded:
		return statusOverloaded, "overloaded_error", "Overloaded"
	case kindUnsupportedParameter:
		return http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("`%s` is not supported for this model.", wireName(e.Param))
	}
	types := map[int]string{
		http.StatusBadRequest:            "invalid_request_error",
		http.StatusUnauthorized:          "authentication_error",
		http.StatusForbidden:             "permission_error",
		http.StatusNotFound:              "not_found_error",
		http.StatusRequestEntityTooLarge: "request_too_large",
		http.StatusTooManyRequests:       "rate_limit_error",
		statusOverloaded:                 "overloaded_error",
	}
	typ, ok := types[e.Status]
	if !ok {
		typ = "api_error"
	}
	return e.Status, typ, e.Message
}

// writeAnthropic sends e as the Anthropic API does.
func (e *APIError) writeAnthropic(w http.ResponseWriter, requestID string, wireName func(string) string) {
	status, typ, message := e.anthropic(wireName)
	body := struct {
		Type  string `json:"type"`
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}{Type: "error", RequestID: requestID}
	body.Error.Type, body.Error.Message = typ, message
	e.writeRetryAfter(w)
	writeJSON(w, status, body)
}

func ceilSeconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "fakeprovider: cannot encode response", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
