package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/docketlabs/docket/replay/genai"
)

// UnsupportedError says that stored content cannot be sent through the API
// as it was recorded (a file reference, a reasoning part, …). It names the
// kind of content, never the content.
type UnsupportedError struct {
	API  API
	What string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("providers: %s cannot take %s", e.API, e.What)
}

// label returns a role or part type for an error message if it looks like
// one (a short lower-case identifier), so that stored text that is not a
// role never reaches an error.
func label(s string) string {
	if len(s) == 0 || len(s) > 32 {
		return "unknown"
	}
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' && r != '-' {
			return "unknown"
		}
	}
	return s
}

// argumentsString returns tool-call arguments as the JSON text OpenAI's APIs
// carry: a recorded JSON string is taken as that text, anything else is
// encoded.
func argumentsString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// argumentsObject returns tool-call arguments as a JSON object, as
// Anthropic's tool_use input must be. ok is false if they are not one.
func argumentsObject(raw json.RawMessage) (json.RawMessage, bool) {
	text := []byte(argumentsString(raw))
	var obj map[string]json.RawMessage
	if json.Unmarshal(text, &obj) != nil || obj == nil {
		return nil, false
	}
	return json.RawMessage(text), true
}

// responseText returns a tool-call response as text: a recorded JSON string
// as it is, anything else as JSON.
func responseText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// parsedArguments turns arguments an API returned as JSON text into a JSON
// value for the GenAI output message; no text is an empty object, text that
// is not JSON stays a string.
func parsedArguments(text string) json.RawMessage {
	if strings.TrimSpace(text) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(text)) {
		return json.RawMessage(text)
	}
	b, _ := json.Marshal(text)
	return b
}

// imageSource returns where an image part's data is: a URL, or base64 data
// with its media type.
func imageSource(p genai.Part) (url, mediaType, data string, ok bool) {
	image := p.Modality == "image" || strings.HasPrefix(p.MimeType, "image/")
	switch {
	case !image:
		return "", "", "", false
	case p.Type == genai.PartURI:
		return p.URI, "", "", true
	case p.Type == genai.PartBlob && p.MimeType != "":
		return "", p.MimeType, p.Content, true
	}
	return "", "", "", false
}

// systemText joins system instructions, which every API takes as text.
func systemText(api API, parts []genai.Part) (string, error) {
	var texts []string
	for _, p := range parts {
		if p.Type != genai.PartText {
			return "", &UnsupportedError{API: api, What: label(p.Type) + " part in system instructions"}
		}
		texts = append(texts, p.Content)
	}
	return strings.Join(texts, "\n"), nil
}

// finishReason maps a provider's finish or stop reason to the conventions'.
func finishReason(provider string) string {
	switch provider {
	case "stop", "end_turn", "stop_sequence", "completed", "pause_turn":
		return "stop"
	case "length", "max_tokens", "max_output_tokens", "model_context_window_exceeded":
		return "length"
	case "tool_calls", "function_call", "tool_use":
		return "tool_call"
	case "content_filter", "refusal":
		return "content_filter"
	}
	return provider
}

// marshal is json.Marshal without HTML escaping (the text is sent as is).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// errorBody reads an error answer's JSON, in either provider's shape;
// the message is returned for parameter matching only and goes no further.
func errorBody(body []byte) (typ, code, param, message, requestID string) {
	var e struct {
		Type  string `json:"type"`
		Error struct {
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
			Param   *string         `json:"param"`
			Message string          `json:"message"`
		} `json:"error"`
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", "", "", "", ""
	}
	if e.Error.Param != nil {
		param = *e.Error.Param
	}
	return e.Error.Type, responseText(e.Error.Code), param, e.Error.Message, e.RequestID
}
