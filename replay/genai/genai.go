// Package genai reads and writes LLM call content in the OpenTelemetry GenAI
// form: gen_ai.input.messages and gen_ai.output.messages are arrays of
// messages made of typed parts, gen_ai.system_instructions an array of parts.
//
//	[{"role": "user", "parts": [{"type": "text", "content": "…"}]}]
//
// Parsing is strict where a replay depends on it (roles, part types and the
// fields each type needs) and bounded: content larger than MaxContentBytes,
// invalid UTF-8 and NUL bytes are rejected. Errors never quote content.
package genai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Part types of the conventions.
const (
	PartText             = "text"
	PartToolCall         = "tool_call"
	PartToolCallResponse = "tool_call_response"
	PartBlob             = "blob"
	PartFile             = "file"
	PartURI              = "uri"
	PartReasoning        = "reasoning"
)

// Roles of the conventions.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one input or output message.
type Message struct {
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
	Name  string `json:"name,omitempty"`
	// FinishReason is set on output messages.
	FinishReason string `json:"finish_reason,omitempty"`
}

// Part is one typed part of a message. Which fields are set depends on Type.
type Part struct {
	Type string `json:"type"`
	// Content: the text of text and reasoning parts; base64 data of blobs.
	Content string `json:"content,omitempty"`
	// ID and Name of a tool call; ID of a tool call response.
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	// Arguments of a tool call and Response of a tool call response, as
	// JSON (any value).
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Response  json.RawMessage `json:"response,omitempty"`
	// URI, FileID, MimeType and Modality of uri, file and blob parts.
	URI      string `json:"uri,omitempty"`
	FileID   string `json:"file_id,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	Modality string `json:"modality,omitempty"`
}

// MaxContentBytes bounds one content object (the content store's default
// object limit).
const MaxContentBytes = 16 << 20

// ErrInvalid marks content that is not in the conventions' form.
var ErrInvalid = errors.New("genai: content is not in the GenAI message format")

// ParseMessages reads gen_ai.input.messages or gen_ai.output.messages, or
// the flattened messages of OpenLLMetry and OpenInference (flattened.go).
func ParseMessages(data []byte) ([]Message, error) {
	if err := checkBytes(data); err != nil {
		return nil, err
	}
	if isFlattened(data) {
		msgs, err := parseFlattenedMessages(data)
		if err == nil && len(msgs) == 0 {
			err = fmt.Errorf("%w: no messages", ErrInvalid)
		}
		return msgs, err
	}
	var msgs []Message
	if err := decodeStrict(data, &msgs); err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, fmt.Errorf("%w: no messages", ErrInvalid)
	}
	for i, m := range msgs {
		if m.Role == "" {
			return nil, fmt.Errorf("%w: message %d has no role", ErrInvalid, i)
		}
		if err := checkParts(m.Parts); err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
	}
	return msgs, nil
}

// ParseParts reads gen_ai.system_instructions: an array of parts. A plain
// JSON string is accepted as one text part, as some instrumentations send it.
func ParseParts(data []byte) ([]Part, error) {
	if err := checkBytes(data); err != nil {
		return nil, err
	}
	var s string
	if json.Unmarshal(data, &s) == nil {
		return []Part{{Type: PartText, Content: s}}, nil
	}
	var parts []Part
	if err := decodeStrict(data, &parts); err != nil {
		return nil, err
	}
	if err := checkParts(parts); err != nil {
		return nil, err
	}
	return parts, nil
}

func checkBytes(data []byte) error {
	switch {
	case len(data) > MaxContentBytes:
		return fmt.Errorf("%w: %d bytes is over the %d-byte limit", ErrInvalid, len(data), MaxContentBytes)
	case !utf8.Valid(data):
		return fmt.Errorf("%w: invalid UTF-8", ErrInvalid)
	case bytes.IndexByte(data, 0) >= 0:
		return fmt.Errorf("%w: NUL byte", ErrInvalid)
	}
	return nil
}

// decodeStrict decodes one JSON value and nothing after it. Unknown fields
// are allowed: the conventions let parts carry extra properties.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		// The decoder's message can quote a fragment of the input; keep only its kind.
		return fmt.Errorf("%w: %s", ErrInvalid, jsonErrorKind(err))
	}
	if dec.More() {
		return fmt.Errorf("%w: data after the JSON value", ErrInvalid)
	}
	return nil
}

func jsonErrorKind(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("syntax error at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("wrong type for field %q", typ.Field)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "unexpected end of JSON"
	}
	return "not valid JSON"
}

func checkParts(parts []Part) error {
	for i, p := range parts {
		var missing string
		switch p.Type {
		case PartText, PartReasoning:
		case PartToolCall:
			if p.Name == "" {
				missing = "name"
			}
		case PartToolCallResponse:
		case PartBlob:
			if p.Content == "" {
				missing = "content"
			}
		case PartFile:
			if p.FileID == "" {
				missing = "file_id"
			}
		case PartURI:
			if p.URI == "" {
				missing = "uri"
			}
		case "":
			return fmt.Errorf("%w: part %d has no type", ErrInvalid, i)
		default:
			// Generic parts are allowed by the conventions; a replay decides
			// whether it can send them.
		}
		if missing != "" {
			return fmt.Errorf("%w: %s part %d has no %s", ErrInvalid, p.Type, i, missing)
		}
	}
	return nil
}

// Text concatenates the text parts of a message, as streamed text arrives.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == PartText {
			b.WriteString(p.Content)
		}
	}
	return b.String()
}

// Text concatenates the text parts of parts.
func Text(parts []Part) string { return Message{Parts: parts}.Text() }

// ToolDefinition is one entry of gen_ai.tool.definitions.
type ToolDefinition struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON Schema
}

// ParseToolDefinitions reads gen_ai.tool.definitions, or the flattened
// tools of OpenLLMetry and OpenInference (flattened.go). Only function
// tools are accepted: other tool types are provider built-ins a replay
// cannot reproduce portably.
func ParseToolDefinitions(data []byte) ([]ToolDefinition, error) {
	if err := checkBytes(data); err != nil {
		return nil, err
	}
	var defs []ToolDefinition
	var err error
	if isFlattened(data) {
		defs, err = parseFlattenedTools(data)
	} else {
		err = decodeStrict(data, &defs)
	}
	if err != nil {
		return nil, err
	}
	for i, d := range defs {
		if d.Type != "function" && d.Type != "" {
			return nil, fmt.Errorf("%w: tool %d has type %q, not function", ErrInvalid, i, d.Type)
		}
		if d.Name == "" {
			return nil, fmt.Errorf("%w: tool %d has no name", ErrInvalid, i)
		}
	}
	return defs, nil
}
