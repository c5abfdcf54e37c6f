package fakeprovider

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

var anthropicHeaders = map[string]string{"anthropic-version": "2023-06-01"}

// messageBody mirrors the client side of a Messages API response.
type messageBody struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Role    string `json:"role"`
	Model   string `json:"model"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StopReason   *string `json:"stop_reason"`
	StopSequence *string `json:"stop_sequence"`
	Usage        *struct {
		InputTokens          int `json:"input_tokens"`
		CacheReadInputTokens int `json:"cache_read_input_tokens"`
		OutputTokens         int `json:"output_tokens"`
	} `json:"usage"`
}

type anthropicErrorBody struct {
	Type  string `json:"type"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
	RequestID string `json:"request_id"`
}

const messagesHello = `{"model":"claude-sonnet-4-0","max_tokens":1024,"system":"Be brief.","messages":[{"role":"user","content":"Hello there"}]}`

func TestMessagesJSON(t *testing.T) {
	srv := start(t, Config{})
	resp := send(t, srv, "/v1/messages", messagesHello, anthropicHeaders)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("request-id"), "req_") {
		t.Fatalf("status %d request-id %q", resp.StatusCode, resp.Header.Get("request-id"))
	}
	raw, _ := io.ReadAll(resp.Body)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"} {
		if _, ok := top[k]; !ok {
			t.Errorf("message lacks %q", k)
		}
	}
	var usage map[string]json.RawMessage
	if err := json.Unmarshal(top["usage"], &usage); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
		if _, ok := usage[k]; !ok {
			t.Errorf("usage lacks %q", k)
		}
	}
	var m messageBody
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.ID, "msg_") || m.Type != "message" || m.Role != "assistant" || m.Model != "claude-sonnet-4-20250514" {
		t.Errorf("id %q type %q role %q model %q", m.ID, m.Type, m.Role, m.Model)
	}
	if len(m.Content) != 1 || m.Content[0].Type != "text" || *m.StopReason != "end_turn" || m.StopSequence != nil {
		t.Errorf("content %+v stop_reason %v stop_sequence %v", m.Content, m.StopReason, m.StopSequence)
	}
	// The same input through Chat Completions gets the same answer.
	chat := decode[completionBody](t, post(t, srv, strings.Replace(helloBody, "gpt-4o-mini", "claude-sonnet-4-0", 1)).Body)
	if m.Content[0].Text != chat.Choices[0].Message.Content || m.Usage.InputTokens != chat.Usage.PromptTokens || m.Usage.OutputTokens != chat.Usage.CompletionTokens {
		t.Errorf("Messages answered %q %+v, Chat Completions %q %+v", m.Content[0].Text, *m.Usage, chat.Choices[0].Message.Content, *chat.Usage)
	}
	// System and content as arrays of text blocks are the same input.
	blocks := `{"model":"claude-sonnet-4-0","max_tokens":1024,"system":[{"type":"text","text":"Be brief."}],"messages":[{"role":"user","content":[{"type":"text","text":"Hello there"}]}]}`
	if got := decode[messageBody](t, send(t, srv, "/v1/messages", blocks, anthropicHeaders).Body); got.Content[0].Text != m.Content[0].Text {
		t.Errorf("blocks answered %q, strings %q", got.Content[0].Text, m.Content[0].Text)
	}
}

func TestMessagesStopReasons(t *testing.T) {
	srv := start(t, Config{})
	full := decode[messageBody](t, send(t, srv, "/v1/messages", messagesHello, anthropicHeaders).Body).Content[0].Text
	stopWord := strings.Fields(full)[2]
	stopped := decode[messageBody](t, send(t, srv, "/v1/messages",
		strings.Replace(messagesHello, `"messages"`, `"stop_sequences":["`+stopWord+`"],"messages"`, 1), anthropicHeaders).Body)
	if stopped.Content[0].Text != full[:strings.Index(full, stopWord)] || *stopped.StopReason != "stop_sequence" || stopped.StopSequence == nil || *stopped.StopSequence != stopWord {
		t.Errorf("stop %q: %q, stop_reason %v stop_sequence %v", stopWord, stopped.Content[0].Text, *stopped.StopReason, stopped.StopSequence)
	}
	cut := decode[messageBody](t, send(t, srv, "/v1/messages", strings.Replace(messagesHello, `1024`, `3`, 1), anthropicHeaders).Body)
	if cut.Content[0].Text != truncateTokens(full, 3) || *cut.StopReason != "max_tokens" || cut.Usage.OutputTokens != 3 {
		t.Errorf("max_tokens 3: %q stop_reason %v usage %+v", cut.Content[0].Text, *cut.StopReason, cut.Usage)
	}
}

func TestMessagesStreaming(t *testing.T) {
	srv := start(t, Config{})
	want := decode[messageBody](t, send(t, srv, "/v1/messages", messagesHello, anthropicHeaders).Body)
	resp := send(t, srv, "/v1/messages", strings.Replace(messagesHello, `"messages"`, `"stream":true,"messages"`, 1), anthropicHeaders)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	events := namedEvents(t, resp.Body)
	var names []string
	var text strings.Builder
	for _, ev := range events {
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		switch ev.name {
		case "message_start":
			var s struct {
				Message messageBody `json:"message"`
			}
			if err := json.Unmarshal(ev.data, &s); err != nil {
				t.Fatal(err)
			}
			if s.Message.ID == "" || s.Message.Model != want.Model || s.Message.StopReason != nil || s.Message.Usage.InputTokens != want.Usage.InputTokens {
				t.Errorf("message_start %s", ev.data)
			}
		case "content_block_delta":
			var d struct {
				Index int `json:"index"`
				Delta struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"delta"`
			}
			if err := json.Unmarshal(ev.data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Delta.Type != "text_delta" {
				t.Errorf("delta %s", ev.data)
			}
			text.WriteString(d.Delta.Text)
		case "message_delta":
			var d struct {
				Delta struct {
					StopReason string `json:"stop_reason"`
				} `json:"delta"`
				Usage struct {
					OutputTokens int `json:"output_tokens"`
				} `json:"usage"`
			}
			if err := json.Unmarshal(ev.data, &d); err != nil {
				t.Fatal(err)
			}
			if d.Delta.StopReason != "end_turn" || d.Usage.OutputTokens != want.Usage.OutputTokens {
				t.Errorf("message_delta %s", ev.data)
			}
		}
	}
	wantNames := "message_start content_block_start ping content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(names, " ") != wantNames {
		t.Errorf("events %v", names)
	}
	if text.String() != want.Content[0].Text {
		t.Errorf("streamed %q, JSON %q", text.String(), want.Content[0].Text)
	}
}

func TestMessagesHeadersAndKey(t *testing.T) {
	srv := start(t, Config{APIKey: "sk-ant-test"})
	cases := []struct {
		name    string
		header  map[string]string
		status  int
		errType string
	}{
		{"no key", anthropicHeaders, 401, "authentication_error"},
		{"wrong key", map[string]string{"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-wrong"}, 401, "authentication_error"},
		{"bearer is not Anthropic's scheme", map[string]string{"anthropic-version": "2023-06-01", "Authorization": "Bearer sk-ant-test"}, 401, "authentication_error"},
		{"no version", map[string]string{"x-api-key": "sk-ant-test"}, 400, "invalid_request_error"},
		{"ok", map[string]string{"anthropic-version": "2023-06-01", "x-api-key": "sk-ant-test"}, 200, ""},
	}
	for _, tc := range cases {
		resp := send(t, srv, "/v1/messages", messagesHello, tc.header)
		raw, _ := io.ReadAll(resp.Body)
		if strings.Contains(string(raw), "sk-ant") {
			t.Errorf("%s: answer echoes the key: %s", tc.name, raw)
		}
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d", tc.name, resp.StatusCode)
			continue
		}
		if tc.errType != "" {
			var e anthropicErrorBody
			if err := json.Unmarshal(raw, &e); err != nil || e.Type != "error" || e.Error.Type != tc.errType || e.Error.Message == "" || e.RequestID != resp.Header.Get("request-id") {
				t.Errorf("%s: body %s", tc.name, raw)
			}
		}
	}
	// The Chat Completions key scheme is unchanged.
	if resp := send(t, srv, "/v1/chat/completions", helloBody, map[string]string{"Authorization": "Bearer sk-ant-test"}); resp.StatusCode != 200 {
		t.Errorf("chat with bearer key: %d", resp.StatusCode)
	}
}

func TestMessagesRejectedRequests(t *testing.T) {
	srv := start(t, Config{})
	cases := []struct {
		name, body string
		status     int
		errType    string
		mentions   string
	}{
		{"not JSON", `{"model":`, 400, "invalid_request_error", "JSON"},
		{"no max_tokens", `{"model":"claude-sonnet-4-0","messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "max_tokens"},
		{"no messages", `{"model":"claude-sonnet-4-0","max_tokens":5,"messages":[]}`, 400, "invalid_request_error", "messages"},
		{"system role in messages", `{"model":"claude-sonnet-4-0","max_tokens":5,"messages":[{"role":"system","content":"hi"}]}`, 400, "invalid_request_error", "messages.0.role"},
		{"temperature above 1", `{"model":"claude-sonnet-4-0","max_tokens":5,"temperature":1.5,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "temperature"},
		{"negative top_k", `{"model":"claude-sonnet-4-0","max_tokens":5,"top_k":-1,"messages":[{"role":"user","content":"hi"}]}`, 400, "invalid_request_error", "top_k"},
		{"unknown model", `{"model":"claude-0","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`, 404, "not_found_error", "model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := send(t, srv, "/v1/messages", tc.body, anthropicHeaders)
			e := decode[anthropicErrorBody](t, resp.Body)
			if resp.StatusCode != tc.status || e.Type != "error" || e.Error.Type != tc.errType || !strings.Contains(e.Error.Message, tc.mentions) {
				t.Errorf("status %d %+v", resp.StatusCode, e)
			}
			if strings.Contains(e.Error.Message, "hi") {
				t.Errorf("message quotes the content: %q", e.Error.Message)
			}
		})
	}
}

func TestMessagesUsageExcludesCachedTokens(t *testing.T) {
	srv := start(t, Config{PromptCache: PromptCache{MinTokens: 64, Step: 16}})
	system := strings.Repeat("Answer politely and cite the policy. ", 20)
	ask := func(q string) messageBody {
		body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-0", "max_tokens": 100, "system": system,
			"messages": []map[string]string{{"role": "user", "content": q}}})
		return decode[messageBody](t, send(t, srv, "/v1/messages", string(body), anthropicHeaders).Body)
	}
	first, second := ask("first question"), ask("second question")
	if first.Usage.CacheReadInputTokens != 0 || second.Usage.CacheReadInputTokens == 0 {
		t.Fatalf("cache reads %d then %d", first.Usage.CacheReadInputTokens, second.Usage.CacheReadInputTokens)
	}
	// Same prompt length, so the cached part moved out of input_tokens.
	if second.Usage.InputTokens+second.Usage.CacheReadInputTokens != first.Usage.InputTokens {
		t.Errorf("first input %d; second input %d + cache read %d", first.Usage.InputTokens, second.Usage.InputTokens, second.Usage.CacheReadInputTokens)
	}
}
