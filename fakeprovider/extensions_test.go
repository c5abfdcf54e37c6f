package fakeprovider

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// recorder collects the answers a server gives.
type recorder struct {
	mu      sync.Mutex
	answers []Answer
}

func (r *recorder) record(a Answer) { r.mu.Lock(); r.answers = append(r.answers, a); r.mu.Unlock() }

func (r *recorder) last(t *testing.T) Answer {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.answers) == 0 {
		t.Fatal("no answer recorded")
	}
	return r.answers[len(r.answers)-1]
}

const weatherTool = `{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"]}`

func TestToolCallsInEveryAPI(t *testing.T) {
	var rec recorder
	srv := start(t, Config{Record: rec.record})

	chat := decode[struct {
		ID      string
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					ID, Type string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}](t, send(t, srv, "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"weather?"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":`+weatherTool+`}}]}`, nil).Body)
	ch := chat.Choices[0]
	if ch.FinishReason != "tool_calls" || ch.Message.Content != nil || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].Function.Name != "get_weather" || !strings.HasPrefix(ch.Message.ToolCalls[0].ID, "call_") {
		t.Fatalf("chat tool call: %+v", ch)
	}
	var args struct {
		City string
		Days int
	}
	if err := json.Unmarshal([]byte(ch.Message.ToolCalls[0].Function.Arguments), &args); err != nil || args.City == "" || args.Days < 1 {
		t.Errorf("arguments %q do not fit the schema: %v", ch.Message.ToolCalls[0].Function.Arguments, err)
	}
	if a := rec.last(t); a.API != "chat.completions" || a.ResponseID != chat.ID || a.FinishReason != "tool_calls" || len(a.ToolCalls) != 1 {
		t.Errorf("recorded %+v", a)
	}

	// A tool result as the last message gets text.
	after := decode[struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
		}
	}](t, send(t, srv, "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"weather?"},
		{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"call_1","content":"sunny"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":`+weatherTool+`}}]}`, nil).Body)
	if after.Choices[0].FinishReason != "stop" {
		t.Errorf("after a tool result: finish %q", after.Choices[0].FinishReason)
	}

	resp := decode[struct {
		Output []struct{ Type, CallID, Name, Arguments string } `json:"output"`
	}](t, send(t, srv, "/v1/responses", `{"model":"gpt-4o-mini","input":"weather?","tools":[{"type":"function","name":"get_weather","parameters":`+weatherTool+`}]}`, nil).Body)
	if len(resp.Output) != 1 || resp.Output[0].Type != "function_call" || resp.Output[0].Name != "get_weather" || resp.Output[0].Arguments == "" {
		t.Errorf("responses tool call: %+v", resp.Output)
	}

	msg := decode[struct {
		Content []struct {
			Type, ID, Name string
			Input          map[string]any
		}
		StopReason string `json:"stop_reason"`
	}](t, send(t, srv, "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":100,"messages":[{"role":"user","content":"weather?"}],
		"tools":[{"name":"get_weather","input_schema":`+weatherTool+`}]}`, anthropicHeaders).Body)
	if msg.StopReason != "tool_use" || len(msg.Content) != 1 || msg.Content[0].Type != "tool_use" || msg.Content[0].Input["city"] == nil {
		t.Errorf("messages tool use: %+v", msg)
	}

	// Streamed, the arguments arrive in pieces that join to the whole.
	var joined strings.Builder
	for _, e := range sseEvents(t, send(t, srv, "/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"weather?"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":`+weatherTool+`}}]}`, nil).Body) {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct{ Function struct{ Arguments string } } `json:"tool_calls"`
				}
			}
		}
		if json.Unmarshal([]byte(e), &c) == nil && len(c.Choices) > 0 {
			for _, tc := range c.Choices[0].Delta.ToolCalls {
				joined.WriteString(tc.Function.Arguments)
			}
		}
	}
	if a := rec.last(t); !a.Stream || len(a.ToolCalls) != 1 || joined.String() != a.ToolCalls[0].Arguments {
		t.Errorf("streamed arguments %q, recorded %+v", joined.String(), a.ToolCalls)
	}
}

func TestEmbeddings(t *testing.T) {
	var rec recorder
	srv := start(t, Config{Record: rec.record})
	type body struct {
		Data []struct {
			Index     int
			Embedding json.RawMessage
		}
		Model string
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
		}
	}
	floats := decode[body](t, send(t, srv, "/v1/embeddings", `{"model":"text-embedding-3-small","input":["one two three","four"],"dimensions":8}`, nil).Body)
	if len(floats.Data) != 2 || floats.Model != "text-embedding-3-small" || floats.Usage.PromptTokens != 4 {
		t.Fatalf("embeddings: %+v", floats)
	}
	var vec []float32
	if err := json.Unmarshal(floats.Data[0].Embedding, &vec); err != nil || len(vec) != 8 {
		t.Fatalf("vector %s: %v", floats.Data[0].Embedding, err)
	}
	b64 := decode[body](t, send(t, srv, "/v1/embeddings", `{"model":"text-embedding-3-small","input":"one two three","dimensions":8,"encoding_format":"base64"}`, nil).Body)
	var s string
	if err := json.Unmarshal(b64.Data[0].Embedding, &s); err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.StdEncoding.DecodeString(s); err != nil || len(raw) != 32 {
		t.Errorf("base64 vector %q: %v", s, err)
	}
	if a := rec.last(t); a.API != "embeddings" || a.Usage == nil || a.Usage.Input != 3 || a.ResponseID != "" {
		t.Errorf("recorded %+v", a)
	}
	if r := send(t, srv, "/v1/embeddings", `{"model":"text-embedding-3-small","input":[]}`, nil); r.StatusCode != 400 {
		t.Errorf("empty input: %d", r.StatusCode)
	}
}

// Anthropic caches only what cache_control marks: the first request writes
// the prefix, the next reads it, and input_tokens excludes both.
func TestMessagesExplicitCache(t *testing.T) {
	var rec recorder
	srv := start(t, Config{Record: rec.record, PromptCache: PromptCache{MinTokens: 50}})
	long := strings.Repeat("policy ", 60)
	req := func(user string) string {
		return `{"model":"claude-sonnet-4-5","max_tokens":50,"system":[{"type":"text","text":"` + long + `","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":"` + user + `"}]}`
	}
	type usage struct {
		Input  int `json:"input_tokens"`
		Write  int `json:"cache_creation_input_tokens"`
		Read   int `json:"cache_read_input_tokens"`
		Output int `json:"output_tokens"`
	}
	first := decode[struct{ Usage usage }](t, send(t, srv, "/v1/messages", req("hi"), anthropicHeaders).Body).Usage
	a1 := rec.last(t)
	second := decode[struct{ Usage usage }](t, send(t, srv, "/v1/messages", req("hello there"), anthropicHeaders).Body).Usage
	a2 := rec.last(t)
	if first.Write == 0 || first.Read != 0 || second.Read != first.Write || second.Write != 0 {
		t.Fatalf("cache write then read: first %+v second %+v", first, second)
	}
	if a1.Usage.Input != first.Input+first.Write || a2.Usage.Input != second.Input+second.Read || a2.Usage.CacheRead != second.Read || a1.Usage.CacheWrite != first.Write {
		t.Errorf("recorded usage is not inclusive: %+v / %+v vs %+v / %+v", *a1.Usage, *a2.Usage, first, second)
	}
	// Without a mark nothing is written.
	plain := decode[struct{ Usage usage }](t, send(t, srv, "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":50,"system":"`+long+`x","messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders).Body).Usage
	if plain.Write != 0 {
		t.Errorf("unmarked prompt wrote the cache: %+v", plain)
	}
}

func TestRecordStreamWithoutUsage(t *testing.T) {
	var rec recorder
	srv := start(t, Config{Record: rec.record})
	sseEvents(t, send(t, srv, "/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil).Body)
	if a := rec.last(t); a.Usage != nil || !a.Stream || a.Model != "gpt-4o-mini-2024-07-18" || a.RequestedModel != "gpt-4o-mini" {
		t.Errorf("a stream without include_usage recorded %+v", a)
	}
}
