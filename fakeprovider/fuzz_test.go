package fakeprovider

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzChatCompletions sends arbitrary bodies: the server must never panic,
// must answer 200 with a well-formed completion or stream, or a 4xx in
// OpenAI's error format.
func FuzzChatCompletions(f *testing.F) {
	f.Add([]byte(helloBody))
	f.Add([]byte(`{"model":"o3-mini","n":2,"max_tokens":3,"stop":"e","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url"}]}]}`))
	f.Add([]byte(`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"assistant","content":null}]}`))
	s, err := New(Config{MaxBodyBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", bytes.NewReader(body)))
		out := rec.Body.Bytes()
		switch {
		case rec.Code == http.StatusOK && strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
			if !bytes.HasSuffix(out, []byte("data: [DONE]\n\n")) {
				t.Fatalf("stream does not end with [DONE]: %q", out)
			}
		case rec.Code == http.StatusOK:
			var c completionBody
			if err := json.Unmarshal(out, &c); err != nil || len(c.Choices) == 0 {
				t.Fatalf("200 with body %q (%v)", out, err)
			}
		case rec.Code >= 400 && rec.Code < 500:
			var e errorBody
			if err := json.Unmarshal(out, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("%d with body %q (%v)", rec.Code, out, err)
			}
		default:
			t.Fatalf("status %d, body %q", rec.Code, out)
		}
	})
}

// FuzzTokens checks the tokenizer's invariants on any input, including
// invalid UTF-8 and NUL bytes.
func FuzzTokens(f *testing.F) {
	f.Add("Hello, world! 12345 naïve\x00\xff  spaces\n")
	f.Fuzz(func(t *testing.T, s string) {
		toks := splitTokens(s)
		if strings.Join(toks, "") != s {
			t.Fatalf("tokens of %q do not join back", s)
		}
		if len(toks) != countTokens(s) {
			t.Fatalf("countTokens %d, splitTokens %d", countTokens(s), len(toks))
		}
		if utf8.ValidString(s) {
			for _, tok := range toks {
				if !utf8.ValidString(tok) {
					t.Fatalf("token %q of valid %q splits a rune", tok, s)
				}
			}
		}
		for n := range min(len(toks), 5) + 1 {
			if got := truncateTokens(s, n); got != strings.Join(toks[:n], "") {
				t.Fatalf("truncateTokens(%q, %d) = %q", s, n, got)
			}
		}
	})
}

// FuzzResponses sends arbitrary bodies to the Responses API: never a panic;
// 200 with a response or an event stream ending in a final event, or a 4xx
// in OpenAI's error format.
func FuzzResponses(f *testing.F) {
	f.Add([]byte(responsesHello))
	f.Add([]byte(`{"model":"o3-mini","stream":true,"max_output_tokens":16,"input":[{"role":"assistant","content":[{"type":"output_text","text":"a"}]},{"type":"function_call_output","output":"x"},{"role":"user","content":null}]}`))
	f.Add([]byte(`{"model":"gpt-4o","instructions":null,"input":"\u0000\ud800"}`))
	s, err := New(Config{MaxBodyBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/responses", bytes.NewReader(body)))
		out := rec.Body.Bytes()
		switch {
		case rec.Code == http.StatusOK && strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
			if !bytes.Contains(out, []byte("event: response.completed\n")) && !bytes.Contains(out, []byte("event: response.incomplete\n")) {
				t.Fatalf("stream without a final event: %q", out)
			}
		case rec.Code == http.StatusOK:
			var r responseBody
			if err := json.Unmarshal(out, &r); err != nil || len(r.Output) == 0 || r.Object != "response" {
				t.Fatalf("200 with body %q (%v)", out, err)
			}
		case rec.Code >= 400 && rec.Code < 500:
			var e errorBody
			if err := json.Unmarshal(out, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
				t.Fatalf("%d with body %q (%v)", rec.Code, out, err)
			}
		default:
			t.Fatalf("status %d, body %q", rec.Code, out)
		}
	})
}

// FuzzMessages sends arbitrary bodies to the Messages API: never a panic;
// 200 with a message or an event stream ending in message_stop, or a 4xx in
// Anthropic's error format.
func FuzzMessages(f *testing.F) {
	f.Add([]byte(messagesHello))
	f.Add([]byte(`{"model":"claude-opus-4-1","max_tokens":2,"stream":true,"top_k":3,"stop_sequences":["",""],"system":[{"type":"text","text":"s"},{"type":"image"}],"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`))
	f.Add([]byte(`{"model":"claude-sonnet-4-0","max_tokens":1e400,"messages":[{"role":"user","content":"a"}]}`))
	s, err := New(Config{MaxBodyBytes: 64 << 10})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(body))
		req.Header.Set("anthropic-version", "2023-06-01")
		s.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		switch {
		case rec.Code == http.StatusOK && strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream"):
			if !bytes.HasSuffix(out, []byte("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")) {
				t.Fatalf("stream does not end with message_stop: %q", out)
			}
		case rec.Code == http.StatusOK:
			var m messageBody
			if err := json.Unmarshal(out, &m); err != nil || len(m.Content) != 1 || m.Type != "message" {
				t.Fatalf("200 with body %q (%v)", out, err)
			}
		case rec.Code >= 400 && rec.Code < 500:
			var e anthropicErrorBody
			if err := json.Unmarshal(out, &e); err != nil || e.Type != "error" || e.Error.Type == "" || e.Error.Message == "" {
				t.Fatalf("%d with body %q (%v)", rec.Code, out, err)
			}
		default:
			t.Fatalf("status %d, body %q", rec.Code, out)
		}
	})
}
