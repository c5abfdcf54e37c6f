package fakeprovider

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// send posts body to path with the given headers.
func send(t *testing.T, srv *httptest.Server, path, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

type namedEvent struct {
	name string
	data json.RawMessage
}

// namedEvents reads a stream of "event: …\ndata: …\n\n" events, failing on
// any other framing, and checks that each payload's "type" is the event name.
func namedEvents(t *testing.T, r io.Reader) []namedEvent {
	t.Helper()
	var out []namedEvent
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), "event: ")
		if !ok {
			t.Fatalf("line %q is not an event line", sc.Text())
		}
		if !sc.Scan() {
			t.Fatalf("event %q has no data line", name)
		}
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			t.Fatalf("event %q: line %q is not a data line", name, sc.Text())
		}
		if !sc.Scan() || sc.Text() != "" {
			t.Fatalf("event %q not followed by a blank line", name)
		}
		var typed struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(data), &typed); err != nil || typed.Type != name {
			t.Fatalf("event %q carries type %q (%v)", name, typed.Type, err)
		}
		out = append(out, namedEvent{name, json.RawMessage(data)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// responseBody mirrors the client side of a Responses API response.
type responseBody struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	CreatedAt         int64  `json:"created_at"`
	Status            string `json:"status"`
	Model             string `json:"model"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type    string `json:"type"`
		ID      string `json:"id"`
		Role    string `json:"role"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Usage *struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

func (r responseBody) text() string {
	var b strings.Builder
	for _, it := range r.Output {
		if it.Type == "message" {
			for _, c := range it.Content {
				b.WriteString(c.Text)
			}
		}
	}
	return b.String()
}

const responsesHello = `{"model":"gpt-4o-mini","instructions":"Be brief.","input":"Hello there"}`

func TestResponsesJSON(t *testing.T) {
	srv := start(t, Config{})
	resp := send(t, srv, "/v1/responses", responsesHello, nil)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("x-request-id"), "req_") {
		t.Fatalf("status %d, x-request-id %q", resp.StatusCode, resp.Header.Get("x-request-id"))
	}
	raw, _ := io.ReadAll(resp.Body)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "object", "created_at", "status", "error", "incomplete_details", "instructions", "model", "output", "temperature", "top_p", "usage", "text", "tools"} {
		if _, ok := top[k]; !ok {
			t.Errorf("response lacks %q", k)
		}
	}
	var body responseBody
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(body.ID, "resp_") || body.Object != "response" || body.Status != "completed" || body.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("id %q object %q status %q model %q", body.ID, body.Object, body.Status, body.Model)
	}
	if len(body.Output) != 1 || body.Output[0].Type != "message" || body.Output[0].Role != "assistant" ||
		!strings.HasPrefix(body.Output[0].ID, "msg_") || body.Output[0].Content[0].Type != "output_text" {
		t.Fatalf("output %+v", body.Output)
	}
	// The instructions are the system message: the same input through Chat
	// Completions gets the same answer and the same token counts.
	chat := decode[completionBody](t, post(t, srv, helloBody).Body)
	if body.text() != chat.Choices[0].Message.Content {
		t.Errorf("Responses answered %q, Chat Completions %q", body.text(), chat.Choices[0].Message.Content)
	}
	u := body.Usage
	if u.InputTokens != chat.Usage.PromptTokens || u.OutputTokens != chat.Usage.CompletionTokens || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage %+v, chat usage %+v", *u, *chat.Usage)
	}

	// Input as an array of message items with input_text parts is the same input.
	items := `{"model":"gpt-4o-mini","instructions":"Be brief.","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Hello there"}]}]}`
	if got := decode[responseBody](t, send(t, srv, "/v1/responses", items, nil).Body).text(); got != body.text() {
		t.Errorf("items input answered %q, string input %q", got, body.text())
	}
}

func TestResponsesStreaming(t *testing.T) {
	srv := start(t, Config{})
	want := decode[responseBody](t, send(t, srv, "/v1/responses", responsesHello, nil).Body)
	resp := send(t, srv, "/v1/responses", strings.Replace(responsesHello, `"input"`, `"stream":true,"input"`, 1), nil)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("Content-Type %q", ct)
	}
	events := namedEvents(t, resp.Body)
	var names []string
	var text strings.Builder
	var done string
	for i, ev := range events {
		var seq struct {
			SequenceNumber *int    `json:"sequence_number"`
			Delta          *string `json:"delta"`
			Text           *string `json:"text"`
		}
		if err := json.Unmarshal(ev.data, &seq); err != nil {
			t.Fatal(err)
		}
		if seq.SequenceNumber == nil || *seq.SequenceNumber != i {
			t.Errorf("event %d (%s) has sequence_number %v", i, ev.name, seq.SequenceNumber)
		}
		if len(names) == 0 || names[len(names)-1] != ev.name {
			names = append(names, ev.name)
		}
		switch ev.name {
		case "response.output_text.delta":
			text.WriteString(*seq.Delta)
		case "response.output_text.done":
			done = *seq.Text
		}
	}
	wantNames := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if strings.Join(names, " ") != strings.Join(wantNames, " ") {
		t.Errorf("events %v\nwant %v", names, wantNames)
	}
	if text.String() != want.text() || done != want.text() {
		t.Errorf("streamed %q (done %q), JSON answered %q", text.String(), done, want.text())
	}
	var final struct {
		Response responseBody `json:"response"`
	}
	if err := json.Unmarshal(events[len(events)-1].data, &final); err != nil {
		t.Fatal(err)
	}
	if final.Response.Status != "completed" || final.Response.Usage == nil || final.Response.Usage.TotalTokens != want.Usage.TotalTokens || final.Response.text() != want.text() {
		t.Errorf("response.completed carries %+v", final.Response)
	}
}

func TestResponsesTokenLimitAndReasoning(t *testing.T) {
	long := strings.Repeat("word ", 40)
	respond, err := Sampled(1, Output{Text: long, Weight: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, Config{Responder: respond})
	body := `{"model":"gpt-4o","max_output_tokens":16,"input":"Hello"}`
	r := decode[responseBody](t, send(t, srv, "/v1/responses", body, nil).Body)
	if r.Status != "incomplete" || r.IncompleteDetails == nil || r.IncompleteDetails.Reason != "max_output_tokens" ||
		r.text() != truncateTokens(long, 16) || r.Usage.OutputTokens != 16 {
		t.Errorf("status %q details %+v text %q usage %+v", r.Status, r.IncompleteDetails, r.text(), r.Usage)
	}
	events := namedEvents(t, send(t, srv, "/v1/responses", strings.Replace(body, `"input"`, `"stream":true,"input"`, 1), nil).Body)
	if last := events[len(events)-1].name; last != "response.incomplete" {
		t.Errorf("a cut stream ends with %s", last)
	}

	srv = start(t, Config{})
	r = decode[responseBody](t, send(t, srv, "/v1/responses", `{"model":"o3-mini","input":"Think."}`, nil).Body)
	if len(r.Output) != 2 || r.Output[0].Type != "reasoning" || !strings.HasPrefix(r.Output[0].ID, "rs_") {
		t.Errorf("reasoning model output %+v", r.Output)
	}
	if rt := r.Usage.OutputTokensDetails.ReasoningTokens; rt <= 0 || r.Usage.OutputTokens != rt+countTokens(r.text()) {
		t.Errorf("usage %+v for %d visible tokens", r.Usage, countTokens(r.text()))
	}
}

func TestResponsesRejectedRequests(t *testing.T) {
	srv := start(t, Config{})
	cases := []struct {
		name, body  string
		status      int
		param, code string
	}{
		{"not JSON", `{"model":`, 400, "", ""},
		{"no model", `{"input":"hi"}`, 400, "model", "missing_required_parameter"},
		{"no input", `{"model":"gpt-4o"}`, 400, "input", "missing_required_parameter"},
		{"empty input", `{"model":"gpt-4o","input":[]}`, 400, "input", "empty_array"},
		{"bad role", `{"model":"gpt-4o","input":[{"role":"robot","content":"hi"}]}`, 400, "input[0].role", "invalid_value"},
		{"bad input", `{"model":"gpt-4o","input":7}`, 400, "", ""},
		{"max_output_tokens below 16", `{"model":"gpt-4o","max_output_tokens":5,"input":"hi"}`, 400, "max_output_tokens", "integer_below_min_value"},
		{"temperature too high", `{"model":"gpt-4o","temperature":2.5,"input":"hi"}`, 400, "temperature", "decimal_above_max_value"},
		{"unknown model", `{"model":"gpt-0","input":"hi"}`, 404, "", "model_not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := send(t, srv, "/v1/responses", tc.body, nil)
			e := decode[errorBody](t, resp.Body)
			if resp.StatusCode != tc.status || e.Error.Type != "invalid_request_error" || deref(e.Error.Param) != tc.param || deref(e.Error.Code) != tc.code {
				t.Errorf("status %d %+v (param %q code %q)", resp.StatusCode, e.Error, deref(e.Error.Param), deref(e.Error.Code))
			}
		})
	}
}
