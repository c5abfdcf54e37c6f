package genai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/docketlabs/docket/internal/conventions"
)

// Instrumentations older than the conventions' message arrays flatten each
// message into attributes, and the content processor stores such an item as
// one JSON object of attribute name to value:
//
//	OpenLLMetry:   {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "…"}
//	OpenInference: {"llm.input_messages.0.message.role": "user",
//	                "llm.input_messages.0.message.content": "…"}
//
// The functions here read those objects into the conventions' form.

// flattenedLists are the attribute lists whose entries are messages, with
// the prefix of each entry's fields.
var flattenedLists = map[string]string{
	conventions.Prompt:            "",
	conventions.Completion:        "",
	conventions.LLMInputMessages:  "message.",
	conventions.LLMOutputMessages: "message.",
}

// maxFlattenedIndex bounds list and part indexes: no instrumentation
// records lists that long, and an absurd index gets a clear error.
const maxFlattenedIndex = 10000

// flatEntry is one entry of a flattened list: its fields by name.
type flatEntry struct {
	index  int
	fields map[string]json.RawMessage
}

// entryIndex collects fields "N.field" into entries by N.
type entryIndex map[int]*flatEntry

// add files v under entry N of rest ("N.field"), without fieldPrefix; it
// reports false for an index that is not a number up to maxFlattenedIndex.
func (ix entryIndex) add(rest, fieldPrefix string, v json.RawMessage) bool {
	idx, field, _ := strings.Cut(rest, ".")
	n, err := strconv.Atoi(idx)
	if err != nil || n < 0 || n > maxFlattenedIndex {
		return false
	}
	e := ix[n]
	if e == nil {
		e = &flatEntry{index: n, fields: map[string]json.RawMessage{}}
		ix[n] = e
	}
	e.fields[strings.TrimPrefix(field, fieldPrefix)] = v
	return true
}

func (ix entryIndex) sorted() []flatEntry {
	out := make([]flatEntry, 0, len(ix))
	for _, e := range ix {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b flatEntry) int { return cmp.Compare(a.index, b.index) })
	return out
}

// readFlattened reads a stored object of flattened attributes, all of one
// list of lists, entry by entry in index order. Each list's field prefix
// is stripped from the field names.
func readFlattened[T any](data []byte, lists map[string]string, read func(flatEntry) (T, error)) ([]T, error) {
	var attrs map[string]json.RawMessage
	if err := decodeStrict(data, &attrs); err != nil {
		return nil, err
	}
	ix := entryIndex{}
	first := ""
	for k, v := range attrs {
		list, rest, ok := cutIndexed(k)
		fieldPrefix, known := lists[list]
		switch {
		case !ok || !known:
			return nil, fmt.Errorf("%w: attribute is not part of a flattened list", ErrInvalid)
		case first == "":
			first = list
		case list != first:
			return nil, fmt.Errorf("%w: attributes of two flattened lists in one object", ErrInvalid)
		}
		if !ix.add(rest, fieldPrefix, v) {
			return nil, fmt.Errorf("%w: entry index out of range", ErrInvalid)
		}
	}
	entries := ix.sorted()
	out := make([]T, 0, len(entries))
	for _, e := range entries {
		v, err := read(e)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// cutIndexed splits "list.N.field" at its first all-digit segment.
func cutIndexed(k string) (list, rest string, ok bool) {
	for i := 0; i < len(k); i++ {
		if k[i] != '.' || i+1 >= len(k) || k[i+1] < '0' || k[i+1] > '9' {
			continue
		}
		end := i + 1
		for end < len(k) && k[end] >= '0' && k[end] <= '9' {
			end++
		}
		if end == len(k) || k[end] == '.' {
			return k[:i], k[i+1:], true
		}
	}
	return "", "", false
}

func isFlattened(data []byte) bool {
	data = bytes.TrimLeft(data, " \t\r\n")
	return len(data) > 0 && data[0] == '{'
}

// str reads a string field; absent is "".
func (e flatEntry) str(field string) (string, error) {
	raw, ok := e.fields[field]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%w: field %q of entry %d is not a string", ErrInvalid, field, e.index)
	}
	return s, nil
}

// sub groups the fields under "name.M." by M, in index order.
func (e flatEntry) sub(name string) ([]flatEntry, error) {
	ix := entryIndex{}
	for k, v := range e.fields {
		if rest, ok := strings.CutPrefix(k, name+"."); ok && !ix.add(rest, "", v) {
			return nil, fmt.Errorf("%w: %s index out of range in entry %d", ErrInvalid, name, e.index)
		}
	}
	return ix.sorted(), nil
}

// parseFlattenedMessages reads OpenLLMetry's and OpenInference's flattened
// messages.
func parseFlattenedMessages(data []byte) ([]Message, error) {
	return readFlattened(data, flattenedLists, flattenedMessage)
}

func flattenedMessage(e flatEntry) (Message, error) {
	var m Message
	var content, toolCallID string
	var err error
	for _, f := range []struct {
		name string
		dst  *string
	}{{"role", &m.Role}, {"name", &m.Name}, {"finish_reason", &m.FinishReason}, {"content", &content}, {"tool_call_id", &toolCallID}} {
		if *f.dst, err = e.str(f.name); err != nil {
			return m, err
		}
	}
	switch {
	case m.Role == RoleTool && toolCallID != "":
		m.Parts = append(m.Parts, Part{Type: PartToolCallResponse, ID: toolCallID, Response: jsonValue(content)})
	case content != "":
		texts, contentBlocksErr := contentBlocks(content, e.index)
		if contentBlocksErr != nil {
			return m, contentBlocksErr
		}
		for _, t := range texts {
			m.Parts = append(m.Parts, Part{Type: PartText, Content: t})
		}
	}
	// OpenInference's multi-part contents: contents.M.message_content.*.
	contents, err := e.sub("contents")
	if err != nil {
		return m, err
	}
	for _, c := range contents {
		typ, strErr := c.str("message_content.type")
		if strErr != nil {
			return m, strErr
		}
		text, strErr := c.str("message_content.text")
		if strErr != nil {
			return m, strErr
		}
		if typ != "" && typ != PartText {
			// The type is not quoted: errors never carry stored values.
			return m, fmt.Errorf("%w: entry %d has a content part other than text, which a replay cannot resend", ErrInvalid, e.index)
		}
		m.Parts = append(m.Parts, Part{Type: PartText, Content: text})
	}
	calls, err := e.sub("tool_calls")
	if err != nil {
		return m, err
	}
	for _, c := range calls {
		p := Part{Type: PartToolCall}
		// OpenLLMetry: id, name, arguments; OpenInference: tool_call.id,
		// tool_call.function.name, tool_call.function.arguments.
		var args string
		for _, f := range []struct {
			dst   *string
			names []string
		}{
			{&p.ID, []string{"id", "tool_call.id"}},
			{&p.Name, []string{"name", "tool_call.function.name"}},
			{&args, []string{"arguments", "tool_call.function.arguments"}},
		} {
			for _, name := range f.names {
				if *f.dst == "" {
					if *f.dst, err = c.str(name); err != nil {
						return m, err
					}
				}
			}
		}
		p.Arguments = jsonValue(args)
		m.Parts = append(m.Parts, p)
	}
	if m.Role == "" {
		return m, fmt.Errorf("%w: message %d has no role", ErrInvalid, e.index)
	}
	if err := checkParts(m.Parts); err != nil {
		return m, fmt.Errorf("message %d: %w", e.index, err)
	}
	return m, nil
}

// contentBlocks reads a message's content. OpenLLMetry records content
// that the SDK got as a list of blocks (Anthropic's, OpenAI's multi-part
// content) as that list in JSON; its text blocks are the message's parts.
// Anything else is the text itself.
func contentBlocks(content string, index int) ([]string, error) {
	var blocks []struct {
		Type *string `json:"type"`
		Text string  `json:"text"`
	}
	if !strings.HasPrefix(content, "[") || json.Unmarshal([]byte(content), &blocks) != nil || len(blocks) == 0 {
		return []string{content}, nil
	}
	texts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		switch {
		case b.Type == nil:
			return []string{content}, nil // not a list of blocks
		case *b.Type != PartText:
			return nil, fmt.Errorf("%w: entry %d has a content block other than text, which a replay cannot resend", ErrInvalid, index)
		}
		texts = append(texts, b.Text)
	}
	return texts, nil
}

// jsonValue keeps s as JSON when it is JSON (tool arguments and results
// usually are), and as a JSON string otherwise.
func jsonValue(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// flattenedToolLists are the attribute lists whose entries are tool
// definitions: OpenLLMetry's functions (name, description, parameters) and
// OpenInference's tools (tool.json_schema, the provider's whole tool
// object).
var flattenedToolLists = map[string]string{
	conventions.LLMRequestFunctions: "",
	conventions.LLMTools:            "tool.",
}

func parseFlattenedTools(data []byte) ([]ToolDefinition, error) {
	return readFlattened(data, flattenedToolLists, flattenedTool)
}

func flattenedTool(e flatEntry) (ToolDefinition, error) {
	var d ToolDefinition
	schema, err := e.str("json_schema")
	if err != nil {
		return d, err
	}
	if schema != "" {
		// {"type": "function", "function": {"name", "description", "parameters"}}
		var t struct {
			Function ToolDefinition `json:"function"`
		}
		if err = decodeStrict([]byte(schema), &t); err != nil {
			return d, fmt.Errorf("tool %d: %w", e.index, err)
		}
		d = t.Function
	} else {
		var params string
		for _, f := range []struct {
			name string
			dst  *string
		}{{"name", &d.Name}, {"description", &d.Description}, {"parameters", &params}} {
			if *f.dst, err = e.str(f.name); err != nil {
				return d, err
			}
		}
		d.Parameters = jsonValue(params)
	}
	d.Type = "function"
	return d, nil
}
