package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// APIError is an error the server answers with, in OpenAI's error format:
//
//	{"error": {"message": "…", "type": "…", "param": null, "code": "…"}}
type APIError struct {
	Status     int    // HTTP status
	Type       string // e.g. "invalid_request_error", "server_error", "requests"
	Code       string // e.g. "rate_limit_exceeded"; empty is sent as null
	Param      string // the offending parameter; empty is sent as null
	Message    string
	RetryAfter time.Duration // sent as a Retry-After header (whole seconds) when > 0
}

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
	}
}

// ServerError is OpenAI's generic 500.
func ServerError() *APIError {
	return &APIError{
		Status:  http.StatusInternalServerError,
		Type:    "server_error",
		Message: "The server had an error while processing your request. Sorry about that!",
	}
}

// Overloaded is OpenAI's 503 when the engine has no capacity.
func Overloaded() *APIError {
	return &APIError{
		Status:  http.StatusServiceUnavailable,
		Type:    "server_error",
		Message: "The engine is currently overloaded, please try again later.",
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

// write sends e as OpenAI does.
func (e *APIError) write(w http.ResponseWriter) {
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
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(ceilSeconds(e.RetryAfter)))
	}
	writeJSON(w, e.Status, body)
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
	w.Write(append(b, '\n'))
}
