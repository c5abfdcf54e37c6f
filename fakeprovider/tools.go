package fakeprovider

import (
	"encoding/json"
	"slices"
	"strings"
)

// Tool is a function the request offers the model, as every API declares
// it: a name and a JSON Schema for its arguments.
type Tool struct {
	Name       string
	Parameters json.RawMessage
}

// ToolCall is a call of one offered tool in a reply. The server assigns the
// ID in the API's own format.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // a JSON object
}

// toolArguments fills the schema's top-level properties with deterministic
// values of their declared types (strings from the answer vocabulary), so
// the arguments validate against the schema a client declared.
func toolArguments(schema json.RawMessage, pick func(n int) int) string {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(schema, &s) // an unreadable schema gets {}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	args := make(map[string]any, len(names))
	for _, name := range names {
		typ, _ := s.Properties[name].Type.(string)
		switch typ {
		case "integer", "number":
			args[name] = 1 + pick(100)
		case "boolean":
			args[name] = pick(2) == 1
		default:
			ws := make([]string, 3)
			for i := range ws {
				ws[i] = words[pick(len(words))]
			}
			args[name] = strings.Join(ws, " ")
		}
	}
	b, _ := json.Marshal(args)
	return string(b)
}

// wantsToolCall reports whether a model offered tools should call one: when
// the conversation ends with the user speaking (not with a tool result).
func wantsToolCall(req *Request) bool {
	n := len(req.Messages)
	return len(req.Tools) > 0 && n > 0 && req.Messages[n-1].Role == "user" && req.Messages[n-1].Text != ""
}

// chatTools reads Chat Completions tools:
// [{"type":"function","function":{"name","parameters"}}].
type chatTool struct {
	Type     string `json:"type"`
	Function struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// flatTool reads Responses tools ({"type":"function","name","parameters"})
// and Messages tools ({"name","input_schema"}).
type flatTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Parameters  json.RawMessage `json:"parameters"`
	InputSchema json.RawMessage `json:"input_schema"`
}

func fromChatTools(ts []chatTool) []Tool {
	var out []Tool
	for _, t := range ts {
		if t.Function.Name != "" {
			out = append(out, Tool{Name: t.Function.Name, Parameters: t.Function.Parameters})
		}
	}
	return out
}

func fromFlatTools(ts []flatTool) []Tool {
	var out []Tool
	for _, t := range ts {
		if t.Name == "" || (t.Type != "" && t.Type != "function" && t.Type != "custom") {
			continue // built-in tools (web search …) are not represented
		}
		params := t.Parameters
		if params == nil {
			params = t.InputSchema
		}
		out = append(out, Tool{Name: t.Name, Parameters: params})
	}
	return out
}
