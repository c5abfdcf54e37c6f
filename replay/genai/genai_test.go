package genai

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseMessages(t *testing.T) {
	in := `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},
	{"role":"user","parts":[{"type":"text","content":"Refund "},{"type":"text","content":"status?"},{"type":"uri","uri":"https://x.example/a.png","modality":"image","mime_type":"image/png"}],"name":"u1"},
	{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"lookup","arguments":{"order":42}}]},
	{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"shipped"}],"x-extra":1}]`
	msgs, err := ParseMessages([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 4 || msgs[1].Text() != "Refund status?" || msgs[1].Name != "u1" || msgs[1].Parts[2].URI != "https://x.example/a.png" {
		t.Fatalf("%+v", msgs)
	}
	call := msgs[2].Parts[0]
	if call.Type != PartToolCall || call.ID != "call_1" || call.Name != "lookup" || string(call.Arguments) != `{"order":42}` {
		t.Errorf("tool call %+v", call)
	}
	if r := msgs[3].Parts[0]; string(r.Response) != `"shipped"` {
		t.Errorf("tool response %s", r.Response)
	}
	// Output messages carry a finish reason; the round trip keeps the form.
	out, err := ParseMessages([]byte(`[{"role":"assistant","parts":[{"type":"text","content":"Done."}],"finish_reason":"stop"}]`))
	if err != nil || out[0].FinishReason != "stop" || out[0].Text() != "Done." {
		t.Fatalf("%+v %v", out, err)
	}
	b, _ := json.Marshal(out)
	if string(b) != `[{"role":"assistant","parts":[{"type":"text","content":"Done."}],"finish_reason":"stop"}]` {
		t.Errorf("round trip %s", b)
	}
}

func TestParseRejects(t *testing.T) {
	secret := "s3cret-prompt"
	cases := map[string]string{
		"not JSON":          `[{"role":"user","parts":[{"type":"text","content":"` + secret,
		"object":            `{"role":"user"}`,
		"empty":             `[]`,
		"no role":           `[{"parts":[{"type":"text","content":"` + secret + `"}]}]`,
		"part without type": `[{"role":"user","parts":[{"content":"` + secret + `"}]}]`,
		"content not text":  `[{"role":"user","parts":[{"type":"text","content":{"a":"` + secret + `"}}]}]`,
		"tool call no name": `[{"role":"assistant","parts":[{"type":"tool_call","id":"x"}]}]`,
		"uri without uri":   `[{"role":"user","parts":[{"type":"uri"}]}]`,
		"trailing data":     `[{"role":"user","parts":[]}] [` + secret + `]`,
		"NUL":               "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"a\x00\"}]}]",
		"invalid UTF-8":     "[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"content\":\"\xff\"}]}]",
		"too large":         `[{"role":"user","parts":[{"type":"text","content":"` + strings.Repeat("a", MaxContentBytes) + `"}]}]`,
	}
	for name, in := range cases {
		_, err := ParseMessages([]byte(in))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v", name, err)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error quotes content: %v", name, err)
		}
	}
}

func TestParseParts(t *testing.T) {
	parts, err := ParseParts([]byte(`[{"type":"text","content":"You are "},{"type":"text","content":"helpful."}]`))
	if err != nil || Text(parts) != "You are helpful." {
		t.Fatalf("%+v %v", parts, err)
	}
	parts, err = ParseParts([]byte(`"Plain instructions."`))
	if err != nil || len(parts) != 1 || parts[0].Type != PartText || parts[0].Content != "Plain instructions." {
		t.Fatalf("%+v %v", parts, err)
	}
	if _, err := ParseParts([]byte(`[{"type":""}]`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("part without type: %v", err)
	}
}

// FuzzParse: any bytes give messages that satisfy the checks, or ErrInvalid
// — never a panic, never another error.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`[{"role":"user","parts":[{"type":"text","content":"hi"}]}]`))
	f.Add([]byte(`[{"role":"assistant","parts":[{"type":"tool_call","name":"f","arguments":[1,{"a":null}]}]}]`))
	f.Add([]byte("\"instr\\u0000\""))
	f.Add([]byte(`{"gen_ai.prompt.0.role":"user","gen_ai.prompt.0.content":"hi","gen_ai.prompt.1.tool_calls.0.name":"f"}`))
	f.Add([]byte(`{"llm.tools.0.tool.json_schema":"{\"function\":{\"name\":\"f\"}}"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := ParseMessages(data)
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("error not ErrInvalid: %v", err)
		}
		for _, m := range msgs {
			if m.Role == "" {
				t.Fatal("message without role accepted")
			}
			for _, p := range m.Parts {
				if p.Type == "" {
					t.Fatal("part without type accepted")
				}
			}
		}
		if _, err := ParseParts(data); err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("ParseParts error not ErrInvalid: %v", err)
		}
		defs, err := ParseToolDefinitions(data)
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Fatalf("ParseToolDefinitions error not ErrInvalid: %v", err)
		}
		for _, d := range defs {
			if d.Name == "" {
				t.Fatal("tool without name accepted")
			}
		}
	})
}

func TestParseToolDefinitions(t *testing.T) {
	defs, err := ParseToolDefinitions([]byte(`[{"type":"function","name":"lookup","description":"Find an order.","parameters":{"type":"object","properties":{"order":{"type":"integer"}}}}]`))
	if err != nil || len(defs) != 1 || defs[0].Name != "lookup" || !strings.Contains(string(defs[0].Parameters), `"order"`) {
		t.Fatalf("%+v %v", defs, err)
	}
	for name, in := range map[string]string{
		"no name":       `[{"type":"function"}]`,
		"built-in tool": `[{"type":"web_search","name":"x"}]`,
		"not an array":  `{"name":"x"}`,
	} {
		if _, err := ParseToolDefinitions([]byte(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestParseFlattened: OpenLLMetry and OpenInference flatten messages and
// tools into attributes; the content processor stores them as one object.
func TestParseFlattened(t *testing.T) {
	openllmetry := `{"gen_ai.prompt.0.role":"system","gen_ai.prompt.0.content":"Be brief.",
	"gen_ai.prompt.1.role":"user","gen_ai.prompt.1.content":"Where is order 42?",
	"gen_ai.prompt.2.role":"assistant","gen_ai.prompt.2.tool_calls.0.id":"call_1","gen_ai.prompt.2.tool_calls.0.name":"lookup",
	"gen_ai.prompt.2.tool_calls.0.arguments":"{\"order\":42}",
	"gen_ai.prompt.10.role":"tool","gen_ai.prompt.10.tool_call_id":"call_1","gen_ai.prompt.10.content":"shipped"}`
	msgs, err := ParseMessages([]byte(openllmetry))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(msgs)
	want := `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},` +
		`{"role":"user","parts":[{"type":"text","content":"Where is order 42?"}]},` +
		`{"role":"assistant","parts":[{"type":"tool_call","id":"call_1","name":"lookup","arguments":{"order":42}}]},` +
		`{"role":"tool","parts":[{"type":"tool_call_response","id":"call_1","response":"shipped"}]}]`
	if string(b) != want {
		t.Errorf("OpenLLMetry prompt:\n got %s\nwant %s", b, want)
	}
	out, err := ParseMessages([]byte(`{"gen_ai.completion.0.role":"assistant","gen_ai.completion.0.content":"It shipped.","gen_ai.completion.0.finish_reason":"stop"}`))
	if err != nil || out[0].Text() != "It shipped." || out[0].FinishReason != "stop" {
		t.Fatalf("OpenLLMetry completion: %+v %v", out, err)
	}

	blocks, err := ParseMessages([]byte(`{"gen_ai.prompt.0.role":"user","gen_ai.prompt.0.content":"[{\"type\":\"text\",\"text\":\"Refund \"},{\"type\":\"text\",\"text\":\"status?\"}]",` +
		`"gen_ai.prompt.1.role":"user","gen_ai.prompt.1.content":"[1, 2]"}`))
	if err != nil || len(blocks[0].Parts) != 2 || blocks[0].Text() != "Refund status?" || blocks[1].Text() != "[1, 2]" {
		t.Fatalf("content blocks: %+v %v", blocks, err)
	}

	openinference := `{"llm.input_messages.0.message.role":"user",
	"llm.input_messages.0.message.contents.1.message_content.type":"text","llm.input_messages.0.message.contents.1.message_content.text":"status?",
	"llm.input_messages.0.message.contents.0.message_content.type":"text","llm.input_messages.0.message.contents.0.message_content.text":"Refund ",
	"llm.input_messages.1.message.role":"assistant",
	"llm.input_messages.1.message.tool_calls.0.tool_call.id":"c1","llm.input_messages.1.message.tool_calls.0.tool_call.function.name":"lookup",
	"llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments":"not json"}`
	if msgs, err = ParseMessages([]byte(openinference)); err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || msgs[0].Text() != "Refund status?" || msgs[1].Parts[0].Name != "lookup" || string(msgs[1].Parts[0].Arguments) != `"not json"` {
		t.Fatalf("OpenInference: %+v", msgs)
	}

	for name, in := range map[string]string{
		"no role":           `{"gen_ai.prompt.0.content":"hi"}`,
		"role not string":   `{"gen_ai.prompt.0.role":7}`,
		"two lists":         `{"gen_ai.prompt.0.role":"user","llm.input_messages.0.message.role":"user"}`,
		"unknown list":      `{"gen_ai.other.0.role":"user"}`,
		"no index":          `{"gen_ai.prompt.role":"user"}`,
		"index too large":   `{"gen_ai.prompt.99999999999.role":"user"}`,
		"image part":        `{"llm.input_messages.0.message.role":"user","llm.input_messages.0.message.contents.0.message_content.type":"image"}`,
		"tool without name": `{"gen_ai.prompt.0.role":"assistant","gen_ai.prompt.0.tool_calls.0.id":"c"}`,
		"empty object":      `{}`,
		"image block":       `{"gen_ai.prompt.0.role":"user","gen_ai.prompt.0.content":"[{\"type\":\"image\",\"source\":{}}]"}`,
	} {
		if _, err := ParseMessages([]byte(in)); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}

	defs, err := ParseToolDefinitions([]byte(`{"llm.request.functions.0.name":"lookup","llm.request.functions.0.description":"Find an order.",
	"llm.request.functions.0.parameters":"{\"type\":\"object\"}"}`))
	if err != nil || len(defs) != 1 || defs[0].Name != "lookup" || defs[0].Description != "Find an order." || string(defs[0].Parameters) != `{"type":"object"}` {
		t.Fatalf("OpenLLMetry functions: %+v %v", defs, err)
	}
	defs, err = ParseToolDefinitions([]byte(`{"llm.tools.0.tool.json_schema":"{\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"parameters\":{}}}"}`))
	if err != nil || len(defs) != 1 || defs[0].Name != "lookup" || defs[0].Type != "function" {
		t.Fatalf("OpenInference tools: %+v %v", defs, err)
	}
}
