package providers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/replay/genai"
)

var apis = []API{ChatCompletions, Responses, Messages}

// recorder wraps a Responder and keeps the requests the fake received.
type recorder struct {
	mu   sync.Mutex
	seen []fakeprovider.Request
	next fakeprovider.Responder
}

func (r *recorder) respond(ctx context.Context, req *fakeprovider.Request) (fakeprovider.Reply, error) {
	r.mu.Lock()
	r.seen = append(r.seen, *req)
	r.mu.Unlock()
	return r.next(ctx, req)
}

func (r *recorder) requests() []fakeprovider.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]fakeprovider.Request(nil), r.seen...)
}

// fake starts the fake provider with next behind a recorder.
func fake(t *testing.T, next fakeprovider.Responder) (*httptest.Server, *recorder) {
	t.Helper()
	rec := &recorder{next: next}
	s, err := fakeprovider.New(fakeprovider.Config{Responder: rec.respond, APIKey: "test-key"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, rec
}

// client returns a Client for api against srv, with retries that do not
// sleep (the delays are recorded instead).
func client(t *testing.T, srv *httptest.Server, api API, stream bool, delays *[]time.Duration) *Client {
	t.Helper()
	env := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "test-key", "ANTHROPIC_BASE_URL": srv.URL, "ANTHROPIC_API_KEY": "test-key"}
	cfg := FromEnv(api, func(k string) string { return env[k] })
	cfg.Stream = stream
	var mu sync.Mutex
	cfg.Retry = Retry{BaseDelay: 100 * time.Millisecond, Rand: func() float64 { return 0.5 }, Sleep: func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		if delays != nil {
			*delays = append(*delays, d)
		}
		return nil
	}}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func request(params Params) Request {
	return Request{
		Model:    "claude-sonnet-4-20250514",
		System:   []genai.Part{{Type: genai.PartText, Content: "Be brief."}},
		Messages: []genai.Message{{Role: genai.RoleUser, Parts: []genai.Part{{Type: genai.PartText, Content: "Where is my refund?"}}}},
		Params:   params,
	}
}

func TestSendOverEveryAPI(t *testing.T) {
	srv, rec := fake(t, fakeprovider.Deterministic)
	params := Params{Temperature: new(float64(0.2)), TopP: new(float64(0.9)), MaxTokens: new(int64(200))}
	var texts []string
	var first Result
	for _, api := range apis {
		for _, stream := range []bool{false, true} {
			res, err := client(t, srv, api, stream, nil).Send(context.Background(), request(params))
			if err != nil {
				t.Fatalf("%s stream=%v: %v", api, stream, err)
			}
			texts = append(texts, res.Text())
			if res.ResponseModel != "claude-sonnet-4-20250514" || res.ResponseID == "" || res.HTTPStatus != 200 || res.Attempts != 1 || len(res.ParamChanges) != 0 {
				t.Errorf("%s stream=%v: %+v", api, stream, res)
			}
			if res.Output.Role != "assistant" || res.Output.FinishReason != "stop" || len(res.Output.Parts) != 1 {
				t.Errorf("%s stream=%v: output %+v", api, stream, res.Output)
			}
			if (res.TTFT != nil) != stream {
				t.Errorf("%s stream=%v: TTFT %v", api, stream, res.TTFT)
			}
			u := res.Usage
			if u.Input == nil || u.Output == nil || *u.Output <= 0 {
				t.Fatalf("%s stream=%v: usage %+v", api, stream, u)
			}
			if first.Usage.Input == nil {
				first = res
			} else if *u.Input != *first.Usage.Input || *u.Output != *first.Usage.Output {
				t.Errorf("%s stream=%v: usage %d/%d, first API %d/%d", api, stream, *u.Input, *u.Output, *first.Usage.Input, *first.Usage.Output)
			}
		}
	}
	// The fake answers an input the same way through every API: the three
	// encodings carry the same system prompt and message.
	for i, text := range texts {
		if text == "" || text != texts[0] {
			t.Errorf("answer %d %q differs from %q", i, text, texts[0])
		}
	}
	// The recorded parameters reached the provider.
	for i, r := range rec.requests() {
		p := r.Params
		if p.Temperature == nil || *p.Temperature != 0.2 || p.TopP == nil || *p.TopP != 0.9 || p.MaxTokens == nil || *p.MaxTokens != 200 {
			t.Errorf("request %d arrived with %+v", i, p)
		}
		if len(r.Messages) != 2 || r.Messages[0] != (fakeprovider.Message{Role: "system", Text: "Be brief."}) || r.Messages[1].Text != "Where is my refund?" {
			t.Errorf("request %d messages %+v", i, r.Messages)
		}
	}
}

func TestParamsTheAPICannotTakeAreReported(t *testing.T) {
	srv, rec := fake(t, fakeprovider.Deterministic)
	all := Params{Temperature: new(float64(0)), TopK: new(float64(40.4)), Seed: new(int64(7)), StopSequences: []string{"\n\n", "END"}}
	cases := []struct {
		api  API
		want []ParamChange
	}{
		{ChatCompletions, []ParamChange{{Param: "top_k", Action: ChangeNotSupported, Recorded: "40.4", Reason: "openai.chat_completions has no such parameter"}}},
		{Responses, []ParamChange{
			{Param: "top_k", Action: ChangeNotSupported, Recorded: "40.4", Reason: "openai.responses has no such parameter"},
			{Param: "seed", Action: ChangeNotSupported, Recorded: "7", Reason: "openai.responses has no such parameter"},
			{Param: "stop_sequences", Action: ChangeNotSupported, Recorded: "2 sequences", Reason: "openai.responses has no such parameter"},
		}},
		{Messages, []ParamChange{
			{Param: "seed", Action: ChangeNotSupported, Recorded: "7", Reason: "anthropic.messages has no such parameter"},
			{Param: "max_tokens", Action: ChangeDefaulted, Sent: "4096", Reason: "the Messages API requires max_tokens and the call recorded none"},
			{Param: "top_k", Action: ChangeAdjusted, Recorded: "40.4", Sent: "40", Reason: "the Messages API takes top_k as an integer"},
		}},
	}
	for _, c := range cases {
		res, err := client(t, srv, c.api, false, nil).Send(context.Background(), request(all))
		if err != nil {
			t.Fatalf("%s: %v", c.api, err)
		}
		got, _ := json.Marshal(res.ParamChanges)
		want, _ := json.Marshal(c.want)
		if string(got) != string(want) {
			t.Errorf("%s: changes\n%s\nwant\n%s", c.api, got, want)
		}
	}
	seen := rec.requests()
	if p := seen[0].Params; p.Seed == nil || *p.Seed != 7 || len(p.Stop) != 2 || p.TopK != nil {
		t.Errorf("chat sent %+v", p)
	}
	if p := seen[2].Params; p.TopK == nil || *p.TopK != 40 || p.MaxTokens == nil || *p.MaxTokens != 4096 || len(p.Stop) != 2 {
		t.Errorf("messages sent %+v", p)
	}
}

func TestRejectedParametersAreDroppedAndReported(t *testing.T) {
	reject, err := fakeprovider.RejectParams(fakeprovider.Deterministic, "temperature", "top_p")
	if err != nil {
		t.Fatal(err)
	}
	srv, rec := fake(t, reject)
	for _, api := range apis {
		for _, stream := range []bool{false, true} {
			before := len(rec.requests())
			res, err := client(t, srv, api, stream, nil).Send(context.Background(), request(Params{Temperature: new(float64(0.3)), TopP: new(float64(0.5)), MaxTokens: new(int64(100))}))
			if err != nil {
				t.Fatalf("%s: %v", api, err)
			}
			// Three requests: with both, without temperature, without top_p.
			if res.Attempts != 3 || len(res.ParamChanges) != 2 {
				t.Fatalf("%s: attempts %d changes %+v", api, res.Attempts, res.ParamChanges)
			}
			for i, want := range []struct{ param, recorded string }{{"temperature", "0.3"}, {"top_p", "0.5"}} {
				ch := res.ParamChanges[i]
				if ch.Param != want.param || ch.Action != ChangeDropped || ch.Recorded != want.recorded || !strings.Contains(ch.Reason, "status 400") {
					t.Errorf("%s: change %d %+v", api, i, ch)
				}
			}
			seen := rec.requests()[before:]
			last := seen[len(seen)-1].Params
			if len(seen) != 3 || last.Temperature != nil || last.TopP != nil || last.MaxTokens == nil || *last.MaxTokens != 100 {
				t.Errorf("%s: %d requests, last with %+v", api, len(seen), last)
			}
		}
	}
}

func TestRequiredOrUnsentParametersAreNotDropped(t *testing.T) {
	rejectMax, _ := fakeprovider.RejectParams(fakeprovider.Deterministic, "max_tokens")
	srv, _ := fake(t, rejectMax)
	// The Messages API cannot do without max_tokens: the rejection is the answer.
	res, err := client(t, srv, Messages, false, nil).Send(context.Background(), request(Params{MaxTokens: new(int64(100))}))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || res.Attempts != 1 {
		t.Fatalf("err %v attempts %d", err, res.Attempts)
	}
	// A 400 about something other than a sent parameter is not retried.
	badRequest := func(context.Context, *fakeprovider.Request) (fakeprovider.Reply, error) {
		return fakeprovider.Reply{}, fakeprovider.BadRequest("messages", "invalid_value", "Invalid 'messages': the content 'Where is my refund?' is not allowed.")
	}
	srv, _ = fake(t, badRequest)
	res, err = client(t, srv, ChatCompletions, false, nil).Send(context.Background(), request(Params{Temperature: new(float64(1))}))
	if !errors.As(err, &apiErr) || apiErr.Param != "messages" || res.Attempts != 1 || len(res.ParamChanges) != 0 {
		t.Fatalf("err %v attempts %d changes %+v", err, res.Attempts, res.ParamChanges)
	}
	if strings.Contains(err.Error(), "refund") {
		t.Errorf("error carries the provider's message: %v", err)
	}
}

func TestTemporaryFailuresAreRetried(t *testing.T) {
	for _, api := range apis {
		t.Run(string(api), func(t *testing.T) {
			failing, err := fakeprovider.FailFirst(3, fakeprovider.Deterministic, fakeprovider.RateLimited(2*time.Second), fakeprovider.Overloaded(), fakeprovider.ServerError())
			if err != nil {
				t.Fatal(err)
			}
			srv, _ := fake(t, failing)
			var delays []time.Duration
			res, err := client(t, srv, api, true, &delays).Send(context.Background(), request(Params{MaxTokens: new(int64(50))}))
			if err != nil {
				t.Fatal(err)
			}
			if res.Attempts != 4 || res.Text() == "" {
				t.Errorf("attempts %d text %q", res.Attempts, res.Text())
			}
			// Retry-After (2s) is a floor; then full jitter at 0.5 of 200ms and 400ms.
			want := []time.Duration{2 * time.Second, 100 * time.Millisecond, 200 * time.Millisecond}
			if len(delays) != 3 || delays[0] != want[0] || delays[1] != want[1] || delays[2] != want[2] {
				t.Errorf("delays %v, want %v", delays, want)
			}
		})
	}
}

func TestRetriesAreBounded(t *testing.T) {
	for _, api := range apis {
		failing, _ := fakeprovider.FailFirst(10, fakeprovider.Deterministic, fakeprovider.Overloaded())
		srv, rec := fake(t, failing)
		res, err := client(t, srv, api, false, nil).Send(context.Background(), request(Params{}))
		var apiErr *APIError
		if !errors.As(err, &apiErr) || !apiErr.Temporary() || res.Attempts != 4 || len(rec.requests()) != 4 {
			t.Errorf("%s: err %v, attempts %d, %d requests", api, err, res.Attempts, len(rec.requests()))
		}
		wantStatus := map[API]int{ChatCompletions: 503, Responses: 503, Messages: 529}[api]
		if apiErr.Status != wantStatus || apiErr.API != api {
			t.Errorf("%s: %+v", api, apiErr)
		}
	}
	// A provider asking to wait longer than MaxDelay is not called early.
	limited, _ := fakeprovider.FailFirst(1, fakeprovider.Deterministic, fakeprovider.RateLimited(time.Minute))
	srv, rec := fake(t, limited)
	res, err := client(t, srv, Messages, false, nil).Send(context.Background(), request(Params{}))
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 429 || apiErr.RetryAfter() != time.Minute || res.Attempts != 1 || len(rec.requests()) != 1 {
		t.Errorf("err %v attempts %d", err, res.Attempts)
	}
}

func TestAuthenticationErrorsAreNotRetried(t *testing.T) {
	srv, _ := fake(t, fakeprovider.Deterministic)
	for _, api := range apis {
		c := client(t, srv, api, false, nil)
		c.cfg.APIKey = "wrong-key"
		res, err := c.Send(context.Background(), request(Params{}))
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != 401 || res.Attempts != 1 {
			t.Errorf("%s: err %v attempts %d", api, err, res.Attempts)
		}
		if strings.Contains(err.Error(), "wrong-key") {
			t.Errorf("%s: error carries the key: %v", api, err)
		}
	}
}

// brokenStream cuts an event stream after its first event, the way a
// dropped connection does, for the first n requests; later requests go to
// the real fake.
func brokenStream(t *testing.T, n int) *httptest.Server {
	t.Helper()
	s, err := fakeprovider.New(fakeprovider.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	broken := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cut := broken < n
		broken++
		mu.Unlock()
		if !cut {
			s.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, r)
		first, _, _ := strings.Cut(rec.Body.String(), "\n\n")
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, first+"\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCutStreamsAreRetried(t *testing.T) {
	for _, api := range apis {
		srv := brokenStream(t, 1)
		res, err := client(t, srv, api, true, nil).Send(context.Background(), request(Params{MaxTokens: new(int64(50))}))
		if err != nil || res.Attempts != 2 || res.Text() == "" {
			t.Errorf("%s: err %v attempts %d", api, err, res.Attempts)
		}
	}
}

func TestAnswersOverTheLimitFail(t *testing.T) {
	srv, _ := fake(t, fakeprovider.Deterministic)
	for _, stream := range []bool{false, true} {
		c := client(t, srv, ChatCompletions, stream, nil)
		c.cfg.MaxResponseBytes = 64
		_, err := c.Send(context.Background(), request(Params{}))
		if !errors.Is(err, errTooLarge) {
			t.Errorf("stream=%v: %v", stream, err)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]Config{
		"unknown API":    {API: "gemini", BaseURL: "https://x.example"},
		"no base URL":    {API: ChatCompletions},
		"not http":       {API: Messages, BaseURL: "ftp://x.example"},
		"negative limit": {API: ChatCompletions, BaseURL: "https://x.example", MaxResponseBytes: -1},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted it", name)
		}
	}
	env := func(k string) string { return map[string]string{"ANTHROPIC_API_KEY": "k"}[k] }
	if cfg := FromEnv(Messages, env); cfg.BaseURL != DefaultAnthropicBaseURL || cfg.APIKey != "k" {
		t.Errorf("FromEnv: %+v", cfg)
	}
	if cfg := FromEnv(Responses, env); cfg.BaseURL != DefaultOpenAIBaseURL || cfg.APIKey != "" {
		t.Errorf("FromEnv: %+v", cfg)
	}
	c, _ := New(FromEnv(ChatCompletions, env))
	if _, err := c.Send(context.Background(), Request{}); err == nil {
		t.Error("sent a request without a model")
	}
}
