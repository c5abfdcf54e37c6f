// Package providers sends a stored LLM call again, over the provider's real
// HTTP API: OpenAI Chat Completions, the OpenAI Responses API, or the
// Anthropic Messages API, streaming or not. It converts the stored input
// (OpenTelemetry GenAI messages, system instructions and tool definitions)
// to the API's wire format, sends the recorded sampling parameters, and
// returns the answer as a GenAI output message with the response model,
// response ID and usage.
//
// Parameters are never dropped silently: a parameter the API has no field
// for, a required one that was not recorded, and one the provider rejects
// (a 400 naming it — the request is then sent again without it) are all
// listed in Result.ParamChanges. Temporary failures (429, 5xx, 529
// overloaded, timeouts, broken streams) are retried by one policy (Retry)
// shared by the three APIs. Errors and results carry no content of the
// request: provider error messages are not kept.
package providers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/docketlabs/docket/replay/genai"
)

// API is a provider wire format.
type API string

// APIs.
const (
	ChatCompletions API = "openai.chat_completions"
	Responses       API = "openai.responses"
	Messages        API = "anthropic.messages"
)

// Config configures a Client.
type Config struct {
	API API
	// BaseURL: for the OpenAI APIs including /v1 (https://api.openai.com/v1),
	// for Anthropic without it (https://api.anthropic.com), as the vendors'
	// SDKs take OPENAI_BASE_URL and ANTHROPIC_BASE_URL.
	BaseURL string
	APIKey  string
	// Stream asks for a server-sent-event stream instead of one JSON answer.
	Stream bool
	Retry  Retry
	// HTTPClient sends requests. Nil means a client without a timeout of its
	// own (Timeout bounds each attempt).
	HTTPClient *http.Client
	// Timeout bounds one attempt, streaming included. 0 means 10 minutes.
	Timeout time.Duration
	// MaxResponseBytes bounds an answer (a stream in total). 0 means 16 MiB.
	MaxResponseBytes int64
	// AnthropicVersion is sent as anthropic-version. Empty means 2023-06-01.
	AnthropicVersion string
	// DefaultMaxTokens is sent as max_tokens to the Messages API, which
	// requires it, when the call recorded none (reported as a change).
	// 0 means 4096.
	DefaultMaxTokens int64
	// LegacyMaxTokens sends max_tokens instead of max_completion_tokens to
	// Chat Completions, for OpenAI-compatible servers that predate it.
	LegacyMaxTokens bool
}

// Default base URLs.
const (
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
)

// FromEnv returns a Config for api with the base URL and key taken from the
// environment as the vendors' SDKs do: OPENAI_BASE_URL and OPENAI_API_KEY,
// or ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY. getenv is os.Getenv in
// programs.
func FromEnv(api API, getenv func(string) string) Config {
	prefix, base := "OPENAI", DefaultOpenAIBaseURL
	if api == Messages {
		prefix, base = "ANTHROPIC", DefaultAnthropicBaseURL
	}
	cfg := Config{API: api, BaseURL: getenv(prefix + "_BASE_URL"), APIKey: getenv(prefix + "_API_KEY")}
	if cfg.BaseURL == "" {
		cfg.BaseURL = base
	}
	return cfg
}

// Request is one call to send again.
type Request struct {
	// Model is the response model the ledger recorded — the snapshot that
	// answered — not the alias the application asked for.
	Model    string
	System   []genai.Part    // gen_ai.system_instructions
	Messages []genai.Message // gen_ai.input.messages
	Tools    []genai.ToolDefinition
	Params   Params
	// Logprobs asks for the tokens the model sampled (Chat Completions,
	// non-streamed; the other APIs have no such option and ignore it).
	Logprobs bool
}

// Params are the recorded sampling parameters; nil (or empty) means the
// call did not record it. The names are the ledger's columns.
type Params struct {
	Temperature   *float64
	TopP          *float64
	TopK          *float64
	MaxTokens     *int64
	Seed          *int64
	StopSequences []string
}

// Parameter names, as the ledger's columns and ParamChange name them.
const (
	ParamTemperature   = "temperature"
	ParamTopP          = "top_p"
	ParamTopK          = "top_k"
	ParamMaxTokens     = "max_tokens"
	ParamSeed          = "seed"
	ParamStopSequences = "stop_sequences"
)

var paramNames = []string{ParamTemperature, ParamTopP, ParamTopK, ParamMaxTokens, ParamSeed, ParamStopSequences}

func (p Params) has(name string) bool {
	switch name {
	case ParamTemperature:
		return p.Temperature != nil
	case ParamTopP:
		return p.TopP != nil
	case ParamTopK:
		return p.TopK != nil
	case ParamMaxTokens:
		return p.MaxTokens != nil
	case ParamSeed:
		return p.Seed != nil
	case ParamStopSequences:
		return len(p.StopSequences) > 0
	}
	return false
}

func (p Params) without(name string) Params {
	switch name {
	case ParamTemperature:
		p.Temperature = nil
	case ParamTopP:
		p.TopP = nil
	case ParamTopK:
		p.TopK = nil
	case ParamMaxTokens:
		p.MaxTokens = nil
	case ParamSeed:
		p.Seed = nil
	case ParamStopSequences:
		p.StopSequences = nil
	}
	return p
}

// describe renders a recorded value for a report. Stop sequences are
// counted, not shown: they are application text.
func (p Params) describe(name string) string {
	switch name {
	case ParamTemperature:
		return fmt.Sprint(*p.Temperature)
	case ParamTopP:
		return fmt.Sprint(*p.TopP)
	case ParamTopK:
		return fmt.Sprint(*p.TopK)
	case ParamMaxTokens:
		return fmt.Sprint(*p.MaxTokens)
	case ParamSeed:
		return fmt.Sprint(*p.Seed)
	case ParamStopSequences:
		return fmt.Sprintf("%d sequences", len(p.StopSequences))
	}
	return ""
}

// ParamChange is a difference between the recorded parameters and those
// the replay ran under.
type ParamChange struct {
	Param    string `json:"param"`
	Action   string `json:"action"`             // one of the Change… values
	Recorded string `json:"recorded,omitempty"` // the recorded value; empty if none was recorded
	Sent     string `json:"sent,omitempty"`     // the value sent instead, if any
	Reason   string `json:"reason"`
}

// ParamChange actions.
const (
	// ChangeDropped: the provider rejected the parameter; the replay ran
	// without it.
	ChangeDropped = "dropped"
	// ChangeNotSupported: the API has no field for it; not sent.
	ChangeNotSupported = "not_supported_by_api"
	// ChangeDefaulted: the API requires it and none was recorded.
	ChangeDefaulted = "defaulted"
	// ChangeAdjusted: sent in the form the API takes (top_k as an integer).
	ChangeAdjusted = "adjusted"
)

// Result is one answer.
type Result struct {
	// Output is the answer as a GenAI output message: text and tool-call
	// parts, and the finish reason in the conventions' vocabulary (stop,
	// length, content_filter, tool_call).
	Output        genai.Message
	ResponseModel string
	ResponseID    string
	// FinishReason is the provider's own value (end_turn, tool_calls, …).
	FinishReason string
	Usage        Usage
	HTTPStatus   int
	// TTFT is the time to the first content of a streamed answer.
	TTFT *time.Duration
	// Attempts counts every HTTP request made: retries and resends after a
	// rejected parameter included. Set on errors too.
	Attempts     int
	ParamChanges []ParamChange
	// Tokens are the answer's sampled tokens, as bytes, when the provider
	// sent them (Request.Logprobs); nil otherwise.
	Tokens []string
}

// Text is the answer's text.
func (r Result) Text() string { return r.Output.Text() }

// Usage is the token usage the provider reported, in the conventions'
// meaning: Input includes cached and cache-written tokens, Output includes
// reasoning tokens. Nil means not reported.
type Usage struct {
	Input      *int64
	Output     *int64
	CacheRead  *int64
	CacheWrite *int64
	Reasoning  *int64
}

// Client sends requests to one API.
type Client struct {
	cfg  Config
	wire wire
	url  string
	http *http.Client
}

// New checks cfg and returns a Client.
func New(cfg Config) (*Client, error) {
	var w wire
	switch cfg.API {
	case ChatCompletions:
		w = chatWire{legacyMaxTokens: cfg.LegacyMaxTokens}
	case Responses:
		w = responsesWire{}
	case Messages:
		if cfg.DefaultMaxTokens == 0 {
			cfg.DefaultMaxTokens = 4096
		}
		if cfg.AnthropicVersion == "" {
			cfg.AnthropicVersion = "2023-06-01"
		}
		w = messagesWire{defaultMaxTokens: cfg.DefaultMaxTokens, version: cfg.AnthropicVersion}
	default:
		return nil, fmt.Errorf("providers: unknown API %q", cfg.API)
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("providers: base URL must be an http or https URL")
	}
	if cfg.DefaultMaxTokens < 0 || cfg.MaxResponseBytes < 0 || cfg.Timeout < 0 {
		return nil, errors.New("providers: limits must not be negative")
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = 16 << 20
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Minute
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	return &Client{cfg: cfg, wire: w, url: strings.TrimSuffix(cfg.BaseURL, "/") + w.path(), http: hc}, nil
}

// wire is what differs between the APIs.
type wire interface {
	path() string
	setHeaders(h http.Header, apiKey string)
	// params adapts recorded parameters to what the API can take, and says
	// what it changed.
	params(p Params) (Params, []ParamChange)
	// required reports parameters the API cannot do without.
	required(name string) bool
	// wireName is the request field of a parameter.
	wireName(name string) string
	encode(req Request, p Params, stream bool) ([]byte, error)
	decode(body []byte) (Result, error)
	decodeStream(ev *eventReader, started time.Time) (Result, error)
	decodeError(body []byte, sent Params) *APIError
}

// Send sends req and returns the answer. Parameters the provider rejects
// are dropped one at a time and the request sent again; each resend is a
// new request and counts in Result.Attempts.
func (c *Client) Send(ctx context.Context, req Request) (Result, error) {
	if req.Model == "" {
		return Result{}, errors.New("providers: no model to send to")
	}
	params, changes := c.wire.params(req.Params)
	attempts := 0
	for {
		body, err := c.wire.encode(req, params, c.cfg.Stream)
		if err != nil {
			return Result{Attempts: attempts, ParamChanges: changes}, err
		}
		var res Result
		n, err := c.cfg.Retry.Do(ctx, func(ctx context.Context) error {
			var innerErr error
			res, innerErr = c.once(ctx, body, params)
			return innerErr
		})
		attempts += n
		if err == nil {
			res.Attempts, res.ParamChanges = attempts, changes
			return res, nil
		}
		name := c.rejected(err, params)
		if name == "" {
			return Result{Attempts: attempts, ParamChanges: changes}, err
		}
		apiErr, _ := errors.AsType[*APIError](err)
		reason := fmt.Sprintf("rejected by the provider (status %d", apiErr.Status)
		if apiErr.Code != "" {
			reason += ", code " + apiErr.Code
		}
		changes = append(changes, ParamChange{Param: name, Action: ChangeDropped, Recorded: params.describe(name), Reason: reason + ")"})
		params = params.without(name)
	}
}

// rejected returns the parameter a 400 answer rejects, if it names one
// that was sent and that the API can do without. When the answer names
// several ("`temperature` and `top_p` cannot both be specified"), the last
// one named is dropped.
func (c *Client) rejected(err error, sent Params) string {
	apiErr, ok := errors.AsType[*APIError](err)
	if !ok || apiErr.Status != http.StatusBadRequest {
		return ""
	}
	named := apiErr.mentioned
	if apiErr.Param != "" {
		named = append(named, apiErr.Param)
	}
	for i := len(named) - 1; i >= 0; i-- {
		for _, name := range paramNames {
			if sent.has(name) && c.wire.wireName(name) == named[i] && !c.wire.required(name) {
				return name
			}
		}
	}
	return ""
}

// once makes one HTTP request.
func (c *Client) once(ctx context.Context, body []byte, sent Params) (Result, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("providers: %s: build request: %w", c.cfg.API, err)
	}
	httpReq.Header.Set("Content-Type", "application/json")
	c.wire.setHeaders(httpReq.Header, c.cfg.APIKey)
	started := time.Now()
	resp, err := c.http.Do(httpReq)
	if err != nil {
		return Result{}, &transportError{api: c.cfg.API, op: "send", err: err}
	}
	defer resp.Body.Close()
	limited := &limitedReader{r: resp.Body, left: c.cfg.MaxResponseBytes}

	if resp.StatusCode != http.StatusOK {
		raw, readAllErr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if readAllErr != nil {
			return Result{}, &transportError{api: c.cfg.API, op: "read error answer", err: readAllErr}
		}
		apiErr := c.wire.decodeError(raw, sent)
		apiErr.API, apiErr.Status = c.cfg.API, resp.StatusCode
		apiErr.retryAfter = retryAfter(resp.Header, time.Now())
		if apiErr.RequestID == "" {
			apiErr.RequestID = firstHeader(resp.Header, "x-request-id", "request-id")
		}
		return Result{}, apiErr
	}

	var res Result
	if c.cfg.Stream {
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			return Result{}, fmt.Errorf("%w: %s: asked for a stream, got %q", ErrBadResponse, c.cfg.API, ct)
		}
		res, err = c.wire.decodeStream(newEventReader(limited), started)
	} else {
		var raw []byte
		raw, err = io.ReadAll(limited)
		if err == nil {
			res, err = c.wire.decode(raw)
		}
	}
	if err != nil {
		return Result{}, c.classify(err)
	}
	res.HTTPStatus = resp.StatusCode
	return res, nil
}

// classify turns a read failure into a temporary transport error; API
// errors inside a stream and format errors stay as they are.
func (c *Client) classify(err error) error {
	if apiErr, ok := errors.AsType[*APIError](err); ok {
		apiErr.API = c.cfg.API
		return err
	}
	if errors.Is(err, ErrBadResponse) || errors.Is(err, errTooLarge) {
		return err
	}
	return &transportError{api: c.cfg.API, op: "read answer", err: err}
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

var errTooLarge = errors.New("providers: answer is over the size limit")

// limitedReader fails, rather than truncates, past its limit.
type limitedReader struct {
	r    io.Reader
	left int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var probe [1]byte
		n, err := l.r.Read(probe[:])
		if n > 0 {
			return 0, errTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
