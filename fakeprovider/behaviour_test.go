package fakeprovider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

var distribution = []Output{{Text: "The refund takes 5 days.", Weight: 7}, {Text: "The refund takes 7 days.", Weight: 2}, {Text: "Refunds are not available.", Weight: 1}}

func TestSampledDealsTheExactDistribution(t *testing.T) {
	respond, err := Sampled(42, distribution...)
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, Config{Responder: respond})
	var order []string
	counts := map[string]int{}
	for i := range 30 {
		text := decode[completionBody](t, post(t, srv, helloBody).Body).Choices[0].Message.Content
		order = append(order, text)
		counts[text]++
		// Every full deck of 10 holds each output exactly Weight times.
		if (i+1)%10 == 0 {
			for _, o := range distribution {
				if counts[o.Text] != o.Weight*(i+1)/10 {
					t.Fatalf("after %d requests %q came %d times, want %d", i+1, o.Text, counts[o.Text], o.Weight*(i+1)/10)
				}
			}
		}
	}
	// The order is shuffled, not dealt in blocks, and the seed decides it.
	if strings.Join(order[:7], "|") == strings.Repeat(distribution[0].Text+"|", 6)+distribution[0].Text {
		t.Errorf("the first deck starts with all %d copies of the first output", 7)
	}
	again, _ := Sampled(42, distribution...)
	other, _ := Sampled(43, distribution...)
	sameSeed, otherSeed := start(t, Config{Responder: again}), start(t, Config{Responder: other})
	var sameOrder, otherOrder []string
	for range 10 {
		sameOrder = append(sameOrder, decode[completionBody](t, post(t, sameSeed, helloBody).Body).Choices[0].Message.Content)
		otherOrder = append(otherOrder, decode[completionBody](t, post(t, otherSeed, helloBody).Body).Choices[0].Message.Content)
	}
	if strings.Join(sameOrder, "|") != strings.Join(order[:10], "|") {
		t.Errorf("the same seed dealt another order")
	}
	if strings.Join(otherOrder, "|") == strings.Join(order[:10], "|") {
		t.Errorf("seeds 42 and 43 dealt the same order")
	}
}

func TestSampledKeepsExactCountsPerInputUnderConcurrency(t *testing.T) {
	respond, err := Sampled(7, distribution...)
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, Config{Responder: respond})
	inputs := []string{
		messagesHello,
		strings.Replace(messagesHello, "Hello there", "Another question", 1),
	}
	var mu sync.Mutex
	counts := map[string]map[string]int{}
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			in := inputs[i%2]
			resp := send(t, srv, "/v1/messages", in, anthropicHeaders)
			var m messageBody
			if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || len(m.Content) != 1 {
				t.Errorf("request %d: %v", i, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if counts[in] == nil {
				counts[in] = map[string]int{}
			}
			counts[in][m.Content[0].Text]++
		})
	}
	wg.Wait()
	for _, in := range inputs {
		for _, o := range distribution {
			if got := counts[in][o.Text]; got != 2*o.Weight {
				t.Errorf("input %d: %q %d times in 20, want %d", len(in), o.Text, got, 2*o.Weight)
			}
		}
	}
}

func TestRejectParams(t *testing.T) {
	respond, err := RejectParams(Deterministic, "temperature", "max_tokens", "stop")
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, Config{Responder: respond})

	openAI := []struct {
		path, body, param string
	}{
		{"/v1/chat/completions", `{"model":"gpt-5","temperature":0,"messages":[{"role":"user","content":"hi"}]}`, "temperature"},
		{"/v1/chat/completions", `{"model":"gpt-5","max_tokens":50,"messages":[{"role":"user","content":"hi"}]}`, "max_completion_tokens"},
		{"/v1/responses", `{"model":"gpt-5","max_output_tokens":50,"input":"hi"}`, "max_output_tokens"},
		{"/v1/responses", `{"model":"gpt-5","temperature":0.2,"max_output_tokens":50,"input":"hi"}`, "temperature"}, // the first configured one
	}
	for _, c := range openAI {
		resp := send(t, srv, c.path, c.body, nil)
		e := decode[errorBody](t, resp.Body)
		want := "Unsupported parameter: '" + c.param + "' is not supported with this model."
		if resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || deref(e.Error.Param) != c.param ||
			deref(e.Error.Code) != "unsupported_parameter" || e.Error.Message != want {
			t.Errorf("%s %s: %d %+v", c.path, c.body, resp.StatusCode, e.Error)
		}
	}
	resp := send(t, srv, "/v1/messages", `{"model":"claude-opus-4-1","max_tokens":50,"stop_sequences":["x"],"messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders)
	// max_tokens is required by the Messages API, so it is always sent and named first.
	e := decode[anthropicErrorBody](t, resp.Body)
	if resp.StatusCode != 400 || e.Error.Type != "invalid_request_error" || e.Error.Message != "`max_tokens` is not supported for this model." {
		t.Errorf("messages: %d %+v", resp.StatusCode, e)
	}
	onlyStop, _ := RejectParams(Deterministic, "stop")
	srv = start(t, Config{Responder: onlyStop})
	e = decode[anthropicErrorBody](t, send(t, srv, "/v1/messages", `{"model":"claude-opus-4-1","max_tokens":50,"stop_sequences":["x"],"messages":[{"role":"user","content":"hi"}]}`, anthropicHeaders).Body)
	if e.Error.Message != "`stop_sequences` is not supported for this model." {
		t.Errorf("stop named %q", e.Error.Message)
	}
	// Without the rejected parameters the request goes through.
	if resp := send(t, srv, "/v1/messages", messagesHello, anthropicHeaders); resp.StatusCode != 200 {
		t.Errorf("plain request: %d", resp.StatusCode)
	}
	if _, err := RejectParams(Deterministic, "temprature"); err == nil {
		t.Error("RejectParams accepted an unknown parameter name")
	}
}

func TestFailFirstOnEveryAPI(t *testing.T) {
	type result struct {
		status     int
		retryAfter string
		errType    string
	}
	apis := []struct {
		name, path, body string
		header           map[string]string
		want             []result
	}{
		{"chat", "/v1/chat/completions", helloBody, nil, []result{{429, "3", "requests"}, {503, "", "server_error"}, {500, "", "server_error"}, {200, "", ""}, {200, "", ""}}},
		{"responses", "/v1/responses", responsesHello, nil, []result{{429, "3", "requests"}, {503, "", "server_error"}, {500, "", "server_error"}, {200, "", ""}, {200, "", ""}}},
		{"messages", "/v1/messages", messagesHello, anthropicHeaders, []result{{429, "3", "rate_limit_error"}, {529, "", "overloaded_error"}, {500, "", "api_error"}, {200, "", ""}, {200, "", ""}}},
	}
	for _, api := range apis {
		t.Run(api.name, func(t *testing.T) {
			respond, err := FailFirst(3, Deterministic, RateLimited(3*time.Second), Overloaded(), ServerError())
			if err != nil {
				t.Fatal(err)
			}
			srv := start(t, Config{Responder: respond})
			for i, want := range api.want {
				resp := send(t, srv, api.path, api.body, api.header)
				raw, _ := io.ReadAll(resp.Body)
				got := result{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
				if resp.StatusCode != 200 {
					var e struct {
						Type  string `json:"type"`
						Error struct {
							Type string `json:"type"`
						} `json:"error"`
					}
					if err := json.Unmarshal(raw, &e); err != nil {
						t.Fatal(err)
					}
					got.errType = e.Error.Type
				}
				if got != want {
					t.Errorf("request %d: %+v, want %+v (%s)", i, got, want, raw)
				}
			}
		})
	}
	if _, err := FailFirst(-1, Deterministic, ServerError()); err == nil {
		t.Error("FailFirst accepted a negative count")
	}
	if _, err := FailFirst(1, Deterministic); err == nil {
		t.Error("FailFirst accepted no errors")
	}
}

func TestSampledConfigErrors(t *testing.T) {
	for name, outs := range map[string][]Output{
		"none":            nil,
		"negative weight": {{Text: "a", Weight: -1}, {Text: "b", Weight: 2}},
		"zero weights":    {{Text: "a"}},
	} {
		if _, err := Sampled(1, outs...); err == nil {
			t.Errorf("%s: Sampled accepted it", name)
		}
	}
}

// A Responder sees the same request whatever API it came by.
func TestResponderSeesProviderNeutralRequests(t *testing.T) {
	var mu sync.Mutex
	var seen []Request
	srv := start(t, Config{Responder: func(ctx context.Context, req *Request) (Reply, error) {
		mu.Lock()
		seen = append(seen, *req)
		mu.Unlock()
		return Reply{Text: "ok"}, nil
	}})
	send(t, srv, "/v1/chat/completions", `{"model":"claude-opus-4-1","temperature":0.5,"top_p":0.9,"max_completion_tokens":40,"stop":["x"],"messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}]}`, nil)
	send(t, srv, "/v1/responses", `{"model":"claude-opus-4-1","temperature":0.5,"top_p":0.9,"max_output_tokens":40,"instructions":"S","input":"U"}`, nil)
	send(t, srv, "/v1/messages", `{"model":"claude-opus-4-1","temperature":0.5,"top_p":0.9,"top_k":5,"max_tokens":40,"stop_sequences":["x"],"system":"S","messages":[{"role":"user","content":"U"}]}`, anthropicHeaders)
	if len(seen) != 3 {
		t.Fatalf("%d requests seen", len(seen))
	}
	for i, r := range seen {
		if r.Model.Snapshot != "claude-opus-4-1-20250805" || r.RequestedModel != "claude-opus-4-1" || len(r.Messages) != 2 ||
			r.Messages[0] != (Message{Role: "system", Text: "S"}) || r.Messages[1] != (Message{Role: "user", Text: "U"}) ||
			*r.Params.Temperature != 0.5 || *r.Params.TopP != 0.9 || *r.Params.MaxTokens != 40 {
			t.Errorf("request %d: %+v", i, r)
		}
	}
	if seen[0].Params.TopK != nil || seen[2].Params.TopK == nil || *seen[2].Params.TopK != 5 || len(seen[1].Params.Stop) != 0 || seen[2].Params.Stop[0] != "x" {
		t.Errorf("top_k/stop: %+v / %+v / %+v", seen[0].Params, seen[1].Params, seen[2].Params)
	}
}

func TestUnknownMethodOnNewRoutes(t *testing.T) {
	srv := start(t, Config{})
	for _, path := range []string{"/v1/responses", "/v1/messages"} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
}
