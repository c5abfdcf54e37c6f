package fakeprovider

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// start runs a Server for cfg behind a real HTTP listener.
func start(t *testing.T, cfg Config) *httptest.Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, srv *httptest.Server, body string) *http.Response {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func decode[T any](t *testing.T, r io.Reader) T {
	t.Helper()
	var v T
	if err := json.NewDecoder(r).Decode(&v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return v
}

// completionBody mirrors the client side of a Chat Completions response.
type completionBody struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Index   int `json:"index"`
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens        int `json:"prompt_tokens"`
		CompletionTokens    int `json:"completion_tokens"`
		TotalTokens         int `json:"total_tokens"`
		PromptTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	} `json:"usage"`
}

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

const helloBody = `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hello there"}]}`

func TestChatCompletionJSONShape(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	srv := start(t, Config{Now: func() time.Time { return now }})
	resp := post(t, srv, helloBody)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if !strings.HasPrefix(resp.Header.Get("x-request-id"), "req_") {
		t.Errorf("x-request-id %q", resp.Header.Get("x-request-id"))
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}

	// The field set is the contract clients parse; compare keys, not just values.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "object", "created", "model", "choices", "usage", "service_tier", "system_fingerprint"} {
		if _, ok := top[k]; !ok {
			t.Errorf("response lacks %q: %s", k, raw)
		}
	}
	var usage map[string]json.RawMessage
	if err := json.Unmarshal(top["usage"], &usage); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"prompt_tokens", "completion_tokens", "total_tokens", "prompt_tokens_details", "completion_tokens_details"} {
		if _, ok := usage[k]; !ok {
			t.Errorf("usage lacks %q: %s", k, top["usage"])
		}
	}

	var body completionBody
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(body.ID, "chatcmpl-") || len(body.ID) != len("chatcmpl-")+29 {
		t.Errorf("id %q", body.ID)
	}
	if body.Object != "chat.completion" || body.Created != now.Unix() {
		t.Errorf("object %q created %d", body.Object, body.Created)
	}
	if body.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("model %q, want the snapshot", body.Model)
	}
	if !strings.HasPrefix(body.SystemFingerprint, "fp_") {
		t.Errorf("system_fingerprint %q", body.SystemFingerprint)
	}
	if len(body.Choices) != 1 {
		t.Fatalf("%d choices", len(body.Choices))
	}
	ch := body.Choices[0]
	if ch.Message.Role != "assistant" || ch.Message.Content == "" || ch.FinishReason != "stop" {
		t.Errorf("choice %+v", ch)
	}
	u := body.Usage
	if u.PromptTokens <= 0 || u.CompletionTokens != countTokens(ch.Message.Content) || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage %+v for content of %d tokens", *u, countTokens(ch.Message.Content))
	}
}

func TestAliasAndSnapshotNames(t *testing.T) {
	srv := start(t, Config{Models: []Model{{Snapshot: "acme-large-2026-01-02", Aliases: []string{"acme-large", "acme-latest"}}}})
	for _, name := range []string{"acme-large", "acme-latest", "acme-large-2026-01-02"} {
		resp := post(t, srv, `{"model":"`+name+`","messages":[{"role":"user","content":"hi"}]}`)
		body := decode[completionBody](t, resp.Body)
		if resp.StatusCode != http.StatusOK || body.Model != "acme-large-2026-01-02" {
			t.Errorf("request %q: status %d model %q", name, resp.StatusCode, body.Model)
		}
	}

	resp := post(t, srv, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`)
	e := decode[errorBody](t, resp.Body)
	if resp.StatusCode != http.StatusNotFound || e.Error.Code == nil || *e.Error.Code != "model_not_found" {
		t.Errorf("unknown model: status %d, %+v", resp.StatusCode, e.Error)
	}
}

func TestSameInputSameAnswer(t *testing.T) {
	srv := start(t, Config{})
	answer := func(body string) (string, string) {
		b := decode[completionBody](t, post(t, srv, body).Body)
		return b.Choices[0].Message.Content, b.ID
	}
	a1, id1 := answer(helloBody)
	a2, id2 := answer(helloBody)
	if a1 != a2 {
		t.Errorf("same input, different answers:\n%q\n%q", a1, a2)
	}
	if id1 == id2 {
		t.Errorf("two responses share id %q", id1)
	}
	other, _ := answer(strings.Replace(helloBody, "Hello there", "Hello here", 1))
	if other == a1 {
		t.Errorf("different inputs got the same answer %q", a1)
	}
	// Content given as an array of text parts is the same input as the plain string.
	parts, _ := answer(`{"model":"gpt-4o-mini","messages":[{"role":"system","content":[{"type":"text","text":"Be brief."}]},{"role":"user","content":"Hello there"}]}`)
	if parts != a1 {
		t.Errorf("content parts answered %q, plain string %q", parts, a1)
	}
}

// sseEvents reads a server-sent-event stream and returns the data payloads,
// failing on anything that is not "data: …" followed by a blank line.
func sseEvents(t *testing.T, r io.Reader) []string {
	t.Helper()
	var events []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		events = append(events, data)
		if !sc.Scan() || sc.Text() != "" {
			t.Fatalf("event %q not followed by a blank line", data)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return events
}

type chunkBody struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role    string  `json:"role"`
			Content *string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
}

func TestStreaming(t *testing.T) {
	srv := start(t, Config{})
	want := decode[completionBody](t, post(t, srv, helloBody).Body)

	for _, includeUsage := range []bool{false, true} {
		body := strings.Replace(helloBody, `"messages"`, `"stream":true,"messages"`, 1)
		if includeUsage {
			body = strings.Replace(body, `"messages"`, `"stream_options":{"include_usage":true},"messages"`, 1)
		}
		resp := post(t, srv, body)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("Content-Type %q", ct)
		}
		events := sseEvents(t, resp.Body)
		if len(events) < 4 || events[len(events)-1] != "[DONE]" {
			t.Fatalf("include_usage=%v: stream does not end with [DONE]: %q", includeUsage, events)
		}

		var text strings.Builder
		var finish string
		var usageChunks int
		var id string
		for i, ev := range events[:len(events)-1] {
			var c chunkBody
			if err := json.Unmarshal([]byte(ev), &c); err != nil {
				t.Fatalf("chunk %d: %v", i, err)
			}
			if c.Object != "chat.completion.chunk" || c.Model != "gpt-4o-mini-2024-07-18" {
				t.Errorf("chunk %d: object %q model %q", i, c.Object, c.Model)
			}
			if id == "" {
				id = c.ID
			} else if c.ID != id {
				t.Errorf("chunk %d id %q, first chunk %q", i, c.ID, id)
			}
			if i == 0 && (len(c.Choices) != 1 || c.Choices[0].Delta.Role != "assistant") {
				t.Errorf("first chunk does not announce the assistant role: %s", ev)
			}
			// With include_usage every chunk has "usage": null but the last; without it, none has the field.
			switch {
			case !includeUsage && c.Usage != nil:
				t.Errorf("chunk %d has usage without include_usage: %s", i, ev)
			case includeUsage && c.Usage == nil:
				t.Errorf("chunk %d lacks the usage field: %s", i, ev)
			case includeUsage && string(c.Usage) != "null":
				usageChunks++
				if len(c.Choices) != 0 {
					t.Errorf("usage chunk has choices: %s", ev)
				}
				var u struct {
					TotalTokens int `json:"total_tokens"`
				}
				if err := json.Unmarshal(c.Usage, &u); err != nil {
					t.Fatal(err)
				}
				if u.TotalTokens != want.Usage.TotalTokens {
					t.Errorf("streamed total_tokens %d, JSON %d", u.TotalTokens, want.Usage.TotalTokens)
				}
			}
			for _, ch := range c.Choices {
				if ch.Delta.Content != nil {
					text.WriteString(*ch.Delta.Content)
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
		}
		if text.String() != want.Choices[0].Message.Content || finish != "stop" {
			t.Errorf("streamed %q (finish %q), JSON answered %q", text.String(), finish, want.Choices[0].Message.Content)
		}
		if want := map[bool]int{false: 0, true: 1}[includeUsage]; usageChunks != want {
			t.Errorf("include_usage=%v: %d usage chunks", includeUsage, usageChunks)
		}
	}
}

func TestInjectedFailures(t *testing.T) {
	respond, err := FailFraction(0.5, Deterministic, RateLimited(20*time.Second), ServerError(), Overloaded())
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, Config{Responder: respond})

	type result struct {
		status     int
		retryAfter string
		typ, code  string
	}
	var got []result
	for range 8 {
		resp := post(t, srv, helloBody)
		r := result{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
		if resp.StatusCode != http.StatusOK {
			e := decode[errorBody](t, resp.Body)
			r.typ = e.Error.Type
			if e.Error.Code != nil {
				r.code = *e.Error.Code
			}
			if e.Error.Message == "" || e.Error.Param != nil {
				t.Errorf("error body %+v", e.Error)
			}
		}
		got = append(got, r)
	}
	// Every second request fails, cycling through the configured errors.
	want := []result{
		{status: 200},
		{status: 429, retryAfter: "20", typ: "requests", code: "rate_limit_exceeded"},
		{status: 200},
		{status: 500, typ: "server_error"},
		{status: 200},
		{status: 503, typ: "server_error"},
		{status: 200},
		{status: 429, retryAfter: "20", typ: "requests", code: "rate_limit_exceeded"},
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("request %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestResponderErrorsThatAreNotAPIErrorsBecome500(t *testing.T) {
	srv := start(t, Config{Responder: func(context.Context, *Request) (Reply, error) {
		return Reply{}, io.ErrUnexpectedEOF
	}})
	resp := post(t, srv, helloBody)
	e := decode[errorBody](t, resp.Body)
	if resp.StatusCode != 500 || e.Error.Type != "server_error" || strings.Contains(e.Error.Message, "EOF") {
		t.Errorf("status %d, %+v", resp.StatusCode, e.Error)
	}
}

func TestRejectedRequests(t *testing.T) {
	srv := start(t, Config{MaxBodyBytes: 1024})
	cases := []struct {
		name, body  string
		status      int
		param, code string
	}{
		{"not JSON", `{"model":`, 400, "", ""},
		{"JSON array", `[1,2]`, 400, "", ""},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, 400, "", ""},
		{"no messages", `{"model":"gpt-4o-mini","messages":[]}`, 400, "messages", "empty_array"},
		{"bad role", `{"model":"gpt-4o-mini","messages":[{"role":"robot","content":"hi"}]}`, 400, "messages[0].role", "invalid_value"},
		{"bad content", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":7}]}`, 400, "", ""},
		{"temperature too high", `{"model":"gpt-4o-mini","temperature":3,"messages":[{"role":"user","content":"hi"}]}`, 400, "temperature", "decimal_above_max_value"},
		{"top_p negative", `{"model":"gpt-4o-mini","top_p":-0.1,"messages":[{"role":"user","content":"hi"}]}`, 400, "top_p", "decimal_below_min_value"},
		{"n zero", `{"model":"gpt-4o-mini","n":0,"messages":[{"role":"user","content":"hi"}]}`, 400, "n", "integer_below_min_value"},
		{"max_tokens zero", `{"model":"gpt-4o-mini","max_tokens":0,"messages":[{"role":"user","content":"hi"}]}`, 400, "max_tokens", "integer_below_min_value"},
		{"stream_options without stream", `{"model":"gpt-4o-mini","stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`, 400, "stream_options", "invalid_value"},
		{"too large", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"` + strings.Repeat("x", 2000) + `"}]}`, 413, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := post(t, srv, tc.body)
			e := decode[errorBody](t, resp.Body)
			if resp.StatusCode != tc.status || e.Error.Type != "invalid_request_error" {
				t.Fatalf("status %d type %q", resp.StatusCode, e.Error.Type)
			}
			if got := deref(e.Error.Param); got != tc.param {
				t.Errorf("param %q, want %q", got, tc.param)
			}
			if got := deref(e.Error.Code); got != tc.code {
				t.Errorf("code %q, want %q", got, tc.code)
			}
			if strings.Contains(e.Error.Message, "xxxx") {
				t.Errorf("error message quotes the request content: %q", e.Error.Message)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestUnknownRoutes(t *testing.T) {
	srv := start(t, Config{})
	for _, r := range []struct{ method, path string }{{"GET", "/v1/chat/completions"}, {"POST", "/v1/completions"}, {"POST", "/chat/completions"}} {
		req, _ := http.NewRequest(r.method, srv.URL+r.path, strings.NewReader(helloBody))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		e := decode[errorBody](t, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || e.Error.Message != "Invalid URL ("+r.method+" "+r.path+")" {
			t.Errorf("%s %s: %d %+v", r.method, r.path, resp.StatusCode, e.Error)
		}
	}
}

// TestLatency: a model answer takes the configured time, and a request
// the server does not serve a model from is not held up by it.
func TestLatency(t *testing.T) {
	const latency = 300 * time.Millisecond
	srv := start(t, Config{Latency: latency})
	began := time.Now()
	if resp := post(t, srv, helloBody); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if took := time.Since(began); took < latency {
		t.Errorf("answer took %s, want at least %s", took, latency)
	}
	began = time.Now()
	resp, err := srv.Client().Post(srv.URL+"/v1/completions", "application/json", strings.NewReader(helloBody))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(began); resp.StatusCode != 404 || took >= latency {
		t.Errorf("unknown route: %d after %s, want 404 without the latency", resp.StatusCode, took)
	}
}

func TestAPIKey(t *testing.T) {
	srv := start(t, Config{APIKey: "sk-test-123"})
	for _, tc := range []struct {
		header string
		status int
	}{{"", 401}, {"Bearer sk-wrong", 401}, {"Bearer sk-test-123", 200}} {
		req, _ := http.NewRequest("POST", srv.URL+"/v1/chat/completions", strings.NewReader(helloBody))
		if tc.header != "" {
			req.Header.Set("Authorization", tc.header)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("Authorization %q: status %d", tc.header, resp.StatusCode)
		}
		if strings.Contains(string(body), "sk-") {
			t.Errorf("answer echoes the key: %s", body)
		}
	}
}

func TestTokenLimitAndStop(t *testing.T) {
	srv := start(t, Config{})
	full := decode[completionBody](t, post(t, srv, helloBody).Body).Choices[0].Message.Content

	limited := decode[completionBody](t, post(t, srv, strings.Replace(helloBody, `"messages"`, `"max_completion_tokens":5,"messages"`, 1)).Body)
	if c := limited.Choices[0]; c.FinishReason != "length" || c.Message.Content != truncateTokens(full, 5) || limited.Usage.CompletionTokens != 5 {
		t.Errorf("max 5 tokens: %q finish %q usage %d (full answer %q)", c.Message.Content, c.FinishReason, limited.Usage.CompletionTokens, full)
	}

	stopWord := strings.Fields(full)[2]
	stopped := decode[completionBody](t, post(t, srv, strings.Replace(helloBody, `"messages"`, `"stop":["`+stopWord+`"],"messages"`, 1)).Body)
	if c := stopped.Choices[0]; c.FinishReason != "stop" || c.Message.Content != full[:strings.Index(full, stopWord)] {
		t.Errorf("stop %q: got %q", stopWord, c.Message.Content)
	}
}

func TestSeveralChoices(t *testing.T) {
	srv := start(t, Config{})
	body := decode[completionBody](t, post(t, srv, strings.Replace(helloBody, `"messages"`, `"n":3,"messages"`, 1)).Body)
	if len(body.Choices) != 3 {
		t.Fatalf("%d choices", len(body.Choices))
	}
	sum := 0
	for i, c := range body.Choices {
		if c.Index != i {
			t.Errorf("choice %d has index %d", i, c.Index)
		}
		sum += countTokens(c.Message.Content)
	}
	if body.Choices[0].Message.Content == body.Choices[1].Message.Content {
		t.Errorf("choices 0 and 1 are identical")
	}
	if body.Usage.CompletionTokens != sum {
		t.Errorf("completion_tokens %d, choices hold %d", body.Usage.CompletionTokens, sum)
	}
}

func TestReasoningTokens(t *testing.T) {
	srv := start(t, Config{})
	body := decode[completionBody](t, post(t, srv, `{"model":"o3-mini","messages":[{"role":"user","content":"Think."}]}`).Body)
	u := body.Usage
	r := u.CompletionTokensDetails.ReasoningTokens
	if r <= 0 || u.CompletionTokens != r+countTokens(body.Choices[0].Message.Content) {
		t.Errorf("reasoning %d, completion %d, visible %d", r, u.CompletionTokens, countTokens(body.Choices[0].Message.Content))
	}
	plain := decode[completionBody](t, post(t, srv, helloBody).Body)
	if plain.Usage.CompletionTokensDetails.ReasoningTokens != 0 {
		t.Errorf("non-reasoning model reports %d reasoning tokens", plain.Usage.CompletionTokensDetails.ReasoningTokens)
	}
}

func TestMissingUsageFraction(t *testing.T) {
	srv := start(t, Config{MissingUsageRate: 0.25})
	missing := 0
	for range 12 {
		raw, _ := io.ReadAll(post(t, srv, helloBody).Body)
		var top map[string]json.RawMessage
		if err := json.Unmarshal(raw, &top); err != nil {
			t.Fatal(err)
		}
		if _, ok := top["usage"]; !ok {
			missing++
		}
	}
	if missing != 3 {
		t.Errorf("%d of 12 responses without usage, want 3", missing)
	}
}

func TestPromptCache(t *testing.T) {
	srv := start(t, Config{PromptCache: PromptCache{MinTokens: 64, Step: 16}})
	system := strings.Repeat("Answer politely and cite the policy. ", 20)
	ask := func(question string) int {
		body, _ := json.Marshal(map[string]any{
			"model": "gpt-4o-mini",
			"messages": []map[string]string{
				{"role": "system", "content": system},
				{"role": "user", "content": question},
			},
		})
		return decode[completionBody](t, post(t, srv, string(body)).Body).Usage.PromptTokensDetails.CachedTokens
	}
	if got := ask("first question"); got != 0 {
		t.Errorf("first request reports %d cached tokens", got)
	}
	systemTokens := messageTokens(Message{Role: "system", Text: system})
	want := systemTokens - systemTokens%16
	if got := ask("second question"); got != want {
		t.Errorf("shared system prompt of %d tokens: %d cached, want %d", systemTokens, got, want)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]Config{
		"rate above 1":     {MissingUsageRate: 1.5},
		"duplicate alias":  {Models: []Model{{Snapshot: "a-1", Aliases: []string{"a"}}, {Snapshot: "a-2", Aliases: []string{"a"}}}},
		"no snapshot":      {Models: []Model{{Aliases: []string{"a"}}}},
		"negative body":    {MaxBodyBytes: -1},
		"negative latency": {Latency: -time.Second},
		"negative step":    {PromptCache: PromptCache{Step: -1}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	if _, err := FailFraction(-0.1, Deterministic, ServerError()); err == nil {
		t.Error("FailFraction accepted a negative rate")
	}
	if _, err := FailFraction(0.1, Deterministic); err == nil {
		t.Error("FailFraction accepted no errors")
	}
}

func TestServeStopsWithContext(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, Config{}) }()

	resp, err := http.Post("http://"+ln.Addr().String()+"/v1/chat/completions", "application/json", strings.NewReader(helloBody))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
}
