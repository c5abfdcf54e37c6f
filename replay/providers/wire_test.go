package providers

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/replay/genai"
)

// toolConversation is a stored input with a tool round trip and an image.
func toolConversation() Request {
	return Request{
		Model:  "m",
		System: []genai.Part{{Type: genai.PartText, Content: "Use tools."}},
		Messages: []genai.Message{
			{Role: genai.RoleUser, Parts: []genai.Part{{Type: genai.PartText, Content: "Where is order 42?"}, {Type: genai.PartURI, URI: "https://x.example/a.png", Modality: "image"}}},
			{Role: genai.RoleAssistant, Parts: []genai.Part{{Type: genai.PartText, Content: "Checking."}, {Type: genai.PartToolCall, ID: "call_1", Name: "lookup", Arguments: json.RawMessage(`{"order":42}`)}}},
			{Role: genai.RoleTool, Parts: []genai.Part{{Type: genai.PartToolCallResponse, ID: "call_1", Response: json.RawMessage(`{"status":"shipped"}`)}}},
		},
		Tools: []genai.ToolDefinition{{Type: "function", Name: "lookup", Description: "Find an order.", Parameters: json.RawMessage(`{"type":"object","properties":{"order":{"type":"integer"}}}`)}},
	}
}

func encodeJSON(t *testing.T, w wire, req Request) string {
	t.Helper()
	p, _ := w.params(req.Params)
	b, err := w.encode(req, p, false)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return string(b)
}

func TestEncodeToolConversations(t *testing.T) {
	req := toolConversation()
	cases := []struct {
		w    wire
		want string
	}{
		{chatWire{}, `{"model":"m","messages":[` +
			`{"role":"system","content":"Use tools."},` +
			`{"role":"user","content":[{"type":"text","text":"Where is order 42?"},{"type":"image_url","image_url":{"url":"https://x.example/a.png"}}]},` +
			`{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{\"order\":42}"}}]},` +
			`{"role":"tool","content":"{\"status\":\"shipped\"}","tool_call_id":"call_1"}],` +
			`"tools":[{"type":"function","function":{"name":"lookup","description":"Find an order.","parameters":{"type":"object","properties":{"order":{"type":"integer"}}}}}]}`},
		{responsesWire{}, `{"model":"m","instructions":"Use tools.","input":[` +
			`{"type":"message","role":"user","content":[{"type":"input_text","text":"Where is order 42?"},{"type":"input_image","image_url":"https://x.example/a.png"}]},` +
			`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Checking."}]},` +
			`{"type":"function_call","call_id":"call_1","name":"lookup","arguments":"{\"order\":42}"},` +
			`{"type":"function_call_output","call_id":"call_1","output":"{\"status\":\"shipped\"}"}],` +
			`"tools":[{"type":"function","name":"lookup","description":"Find an order.","parameters":{"type":"object","properties":{"order":{"type":"integer"}}}}],"store":false}`},
		{messagesWire{defaultMaxTokens: 4096, version: "v"}, `{"model":"m","max_tokens":4096,"system":"Use tools.","messages":[` +
			`{"role":"user","content":[{"type":"text","text":"Where is order 42?"},{"type":"image","source":{"type":"url","url":"https://x.example/a.png"}}]},` +
			`{"role":"assistant","content":[{"type":"text","text":"Checking."},{"type":"tool_use","id":"call_1","name":"lookup","input":{"order":42}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"{\"status\":\"shipped\"}"}]}],` +
			`"tools":[{"name":"lookup","description":"Find an order.","input_schema":{"type":"object","properties":{"order":{"type":"integer"}}}}]}`},
	}
	for _, c := range cases {
		if got := encodeJSON(t, c.w, req); got != c.want {
			t.Errorf("%T:\n got %s\nwant %s", c.w, got, c.want)
		}
	}
}

func TestEncodeSpecialCases(t *testing.T) {
	// A leading system message joins Anthropic's system prompt; a base64 image becomes a data source.
	req := Request{Model: "m", Messages: []genai.Message{
		{Role: genai.RoleSystem, Parts: []genai.Part{{Type: genai.PartText, Content: "S"}}},
		{Role: genai.RoleUser, Parts: []genai.Part{{Type: genai.PartBlob, MimeType: "image/png", Content: "iVBO"}}},
	}}
	got := encodeJSON(t, messagesWire{defaultMaxTokens: 10, version: "v"}, req)
	if !strings.Contains(got, `"system":"S"`) || !strings.Contains(got, `"source":{"type":"base64","media_type":"image/png","data":"iVBO"}`) {
		t.Errorf("messages: %s", got)
	}
	if got := encodeJSON(t, chatWire{}, req); !strings.Contains(got, `"url":"data:image/png;base64,iVBO"`) {
		t.Errorf("chat: %s", got)
	}
	// Legacy servers get max_tokens, current ones max_completion_tokens.
	req.Params.MaxTokens = new(int64(5))
	if got := encodeJSON(t, chatWire{legacyMaxTokens: true}, req); !strings.Contains(got, `"max_tokens":5`) || strings.Contains(got, "max_completion_tokens") {
		t.Errorf("legacy: %s", got)
	}
	// Arguments recorded as a JSON string are that JSON text.
	str := Request{Model: "m", Messages: []genai.Message{{Role: genai.RoleAssistant, Parts: []genai.Part{{Type: genai.PartToolCall, ID: "c", Name: "f", Arguments: json.RawMessage(`"{\"a\":1}"`)}}}}}
	if got := encodeJSON(t, messagesWire{defaultMaxTokens: 1, version: "v"}, str); !strings.Contains(got, `"input":{"a":1}`) {
		t.Errorf("string arguments: %s", got)
	}
}

func TestEncodeRejectsWhatTheAPICannotTake(t *testing.T) {
	msg := func(role string, parts ...genai.Part) Request {
		return Request{Model: "m", Messages: []genai.Message{{Role: role, Parts: parts}}}
	}
	secret := genai.Part{Type: genai.PartText, Content: "secret text"}
	cases := []struct {
		name string
		w    wire
		req  Request
	}{
		{"file part", chatWire{}, msg(genai.RoleUser, genai.Part{Type: genai.PartFile, FileID: "f"})},
		{"reasoning part", responsesWire{}, msg(genai.RoleAssistant, genai.Part{Type: genai.PartReasoning, Content: "secret text"})},
		{"audio blob", messagesWire{defaultMaxTokens: 1}, msg(genai.RoleUser, genai.Part{Type: genai.PartBlob, MimeType: "audio/wav", Content: "x"})},
		{"image from the assistant", chatWire{}, msg(genai.RoleAssistant, genai.Part{Type: genai.PartURI, URI: "u", Modality: "image"})},
		{"late system message", messagesWire{defaultMaxTokens: 1}, Request{Model: "m", Messages: []genai.Message{{Role: genai.RoleUser, Parts: []genai.Part{secret}}, {Role: genai.RoleSystem, Parts: []genai.Part{secret}}}}},
		{"unknown role", messagesWire{defaultMaxTokens: 1}, msg("developer", secret)},
		{"arguments not an object", messagesWire{defaultMaxTokens: 1}, msg(genai.RoleAssistant, genai.Part{Type: genai.PartToolCall, Name: "f", Arguments: json.RawMessage(`[1]`)})},
		{"image in system instructions", chatWire{}, Request{Model: "m", System: []genai.Part{{Type: genai.PartURI, URI: "u"}}}},
	}
	for _, c := range cases {
		p, _ := c.w.params(c.req.Params)
		_, err := c.w.encode(c.req, p, false)
		var u *UnsupportedError
		if !errors.As(err, &u) || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestDecodeToolCallAnswers(t *testing.T) {
	cases := []struct {
		w      wire
		body   string
		finish string
	}{
		{chatWire{}, `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-2024-08-06","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_9","type":"function","function":{"name":"lookup","arguments":"{\"order\":42}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":30,"completion_tokens":9,"total_tokens":39,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`, "tool_calls"},
		{responsesWire{}, `{"id":"resp_1","object":"response","status":"completed","model":"gpt-4o-2024-08-06","output":[{"type":"function_call","id":"fc_1","call_id":"call_9","name":"lookup","arguments":"{\"order\":42}","status":"completed"}],"usage":{"input_tokens":30,"input_tokens_details":{"cached_tokens":0},"output_tokens":9,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":39}}`, "completed"},
		{messagesWire{}, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{"type":"tool_use","id":"call_9","name":"lookup","input":{"order":42}}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"cache_read_input_tokens":15,"cache_creation_input_tokens":5,"output_tokens":9}}`, "tool_use"},
	}
	for _, c := range cases {
		res, err := c.w.decode([]byte(c.body))
		if err != nil {
			t.Fatalf("%T: %v", c.w, err)
		}
		if res.FinishReason != c.finish || res.Output.FinishReason != "tool_call" || len(res.Output.Parts) != 1 {
			t.Fatalf("%T: %+v", c.w, res)
		}
		p := res.Output.Parts[0]
		if p.Type != genai.PartToolCall || p.ID != "call_9" || p.Name != "lookup" || string(p.Arguments) != `{"order":42}` {
			t.Errorf("%T: part %+v", c.w, p)
		}
		// Input counts every prompt token, cached ones included.
		if *res.Usage.Input != 30 || *res.Usage.Output != 9 {
			t.Errorf("%T: usage %d/%d", c.w, *res.Usage.Input, *res.Usage.Output)
		}
	}
}

func TestDecodeStreamedToolCalls(t *testing.T) {
	chat := "data: {\"id\":\"c1\",\"model\":\"gpt-4o\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"call_9\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"\"}}]}}]}\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"order\\\"\"}}]}}]}\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\":42}\"}}]}}]}\n\n" +
		"data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n" +
		"data: [DONE]\n\n"
	anthropic := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"model\":\"claude-x\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"call_9\",\"name\":\"lookup\",\"input\":{}}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"order\\\":\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"42}\"}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n" +
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	for _, c := range []struct {
		w      wire
		stream string
	}{{chatWire{}, chat}, {messagesWire{}, anthropic}} {
		res, err := c.w.decodeStream(newEventReader(strings.NewReader(c.stream)), time.Now())
		if err != nil {
			t.Fatalf("%T: %v", c.w, err)
		}
		if len(res.Output.Parts) != 1 || string(res.Output.Parts[0].Arguments) != `{"order":42}` || res.Output.Parts[0].ID != "call_9" || res.Output.FinishReason != "tool_call" || res.TTFT == nil {
			t.Errorf("%T: %+v", c.w, res)
		}
	}
}

func TestStreamErrorEvents(t *testing.T) {
	cases := []struct {
		w      wire
		stream string
		status int
	}{
		{messagesWire{}, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", 529},
		{chatWire{}, "data: {\"error\":{\"message\":\"x\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n", 500},
		{responsesWire{}, "event: error\ndata: {\"type\":\"error\",\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\"}\n\n", 429},
		{responsesWire{}, "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"x\"}}}\n\n", 500},
	}
	for _, c := range cases {
		_, err := c.w.decodeStream(newEventReader(strings.NewReader(c.stream)), time.Now())
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != c.status || !apiErr.Temporary() {
			t.Errorf("%T: %v", c.w, err)
		}
	}
}

func TestMentions(t *testing.T) {
	cases := []struct {
		message string
		want    []string
	}{
		{"`temperature` and `top_p` cannot both be specified for this model. Please use only one.", []string{"temperature", "top_p"}},
		{"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", []string{"max_tokens"}},
		{"temperature: range: 0..1", []string{"temperature"}},
		{"top_k is fine but the attempt was not", nil},
		{`"stop" is too long`, []string{"stop"}},
	}
	for _, c := range cases {
		if got := mentions(c.message, []string{"top_p", "temperature", "max_tokens", "stop", "top_k"}); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.message, got, c.want)
		}
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		header map[string]string
		want   time.Duration
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second},
		{map[string]string{"Retry-After": "0.5"}, 500 * time.Millisecond},
		{map[string]string{"retry-after-ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After": now.Add(10 * time.Second).Format(http.TimeFormat)}, 10 * time.Second},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After": "-4"}, 0},
		{nil, 0},
	}
	for _, c := range cases {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != c.want {
			t.Errorf("%v: %v, want %v", c.header, got, c.want)
		}
	}
}

type tempErr struct {
	temporary bool
	after     time.Duration
}

func (e tempErr) Error() string             { return "temp" }
func (e tempErr) Temporary() bool           { return e.temporary }
func (e tempErr) RetryAfter() time.Duration { return e.after }

func TestRetryPolicy(t *testing.T) {
	var delays []time.Duration
	r := Retry{MaxAttempts: 6, BaseDelay: time.Second, MaxDelay: 5 * time.Second, Rand: func() float64 { return 0.999 },
		Sleep: func(_ context.Context, d time.Duration) error { delays = append(delays, d); return nil }}
	n, err := r.Do(context.Background(), func(context.Context) error { return tempErr{temporary: true} })
	if n != 6 || err == nil {
		t.Fatalf("attempts %d err %v", n, err)
	}
	// Ceilings 1s, 2s, 4s, then capped at 5s; full jitter stays below each.
	ceilings := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}
	for i, c := range ceilings {
		if delays[i] >= c || delays[i] < c*99/100 {
			t.Errorf("delay %d = %v, ceiling %v", i, delays[i], c)
		}
	}
	// Errors that are not temporary end at once; so does a cancelled context.
	n, _ = r.Do(context.Background(), func(context.Context) error { return errors.New("permanent") })
	if n != 1 {
		t.Errorf("permanent error: %d attempts", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n, _ = r.Do(ctx, func(context.Context) error { cancel(); return tempErr{temporary: true} })
	if n != 1 {
		t.Errorf("cancelled: %d attempts", n)
	}
	// The real sleep ends with the context.
	ctx, cancel = context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	start := time.Now()
	n, _ = Retry{BaseDelay: time.Hour, MaxDelay: time.Hour, Rand: func() float64 { return 0.5 }}.Do(ctx, func(context.Context) error { return tempErr{temporary: true} })
	if n != 1 || time.Since(start) > 5*time.Second {
		t.Errorf("sleep outlived its context: %d attempts, %v", n, time.Since(start))
	}
}
