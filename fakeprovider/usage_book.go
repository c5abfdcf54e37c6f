package fakeprovider

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// UsageConfig configures Usage: the admin usage endpoints in front of a
// Server.
type UsageConfig struct {
	// AdminKey must arrive as "Authorization: Bearer <AdminKey>" (OpenAI)
	// or "x-api-key: <AdminKey>" (Anthropic) on the usage endpoints.
	AdminKey string
	// Keys maps the API keys clients send to what the reports call them:
	// the key's ID and its OpenAI project or Anthropic workspace. A key
	// not listed is reported as "key_unlisted" in "proj_default".
	Keys map[string]KeyInfo
	// Now is the time an answer is counted at (its day). Nil is time.Now.
	Now func() time.Time
}

// KeyInfo names an API key in the usage reports.
type KeyInfo struct {
	ID      string // e.g. key_abc (OpenAI) or apikey_01… (Anthropic)
	Project string // OpenAI project ID or Anthropic workspace ID
}

// Usage serves OpenAI's organization Usage API and Anthropic's Admin usage
// report from what the wrapped server actually answered: it reads every
// successful answer on its way to the client (JSON or server-sent events)
// and counts its model and usage per day, endpoint and API key. An answer
// sent without usage counts as a request with no tokens: the book holds
// what was said, nothing more.
type Usage struct {
	next http.Handler
	cfg  UsageConfig
	mu   sync.Mutex
	book map[usageCell]*usageCount
}

type usageCell struct {
	provider, endpoint string
	day                time.Time
	model              string
	key                KeyInfo
}

type usageCount struct {
	requests, input, output, cacheRead, cacheWrite int64
}

// NewUsage wraps next (usually a *Server) with the usage endpoints.
func NewUsage(next http.Handler, cfg UsageConfig) (*Usage, error) {
	if cfg.AdminKey == "" {
		return nil, errors.New("fakeprovider: usage endpoints need an AdminKey")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Usage{next: next, cfg: cfg, book: map[usageCell]*usageCount{}}, nil
}

// answered maps the answering routes to the report and endpoint they count in.
var answered = map[string][2]string{
	"/v1/chat/completions": {"openai", "completions"},
	"/v1/responses":        {"openai", "completions"},
	"/v1/embeddings":       {"openai", "embeddings"},
	"/v1/messages":         {"anthropic", "messages"},
}

func (u *Usage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		switch r.URL.Path {
		case "/v1/organization/usage/completions":
			u.openAIReport(w, r, "completions")
			return
		case "/v1/organization/usage/embeddings":
			u.openAIReport(w, r, "embeddings")
			return
		case "/v1/organizations/usage_report/messages":
			u.anthropicReport(w, r)
			return
		}
	}
	route, counted := answered[r.URL.Path]
	if r.Method != http.MethodPost || !counted {
		u.next.ServeHTTP(w, r)
		return
	}
	key := r.Header.Get("x-api-key")
	if route[0] == "openai" {
		key = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	tee := &teeWriter{ResponseWriter: w, status: http.StatusOK}
	u.next.ServeHTTP(tee, r)
	if tee.status != http.StatusOK || tee.over {
		return
	}
	model, counts := readAnswer(tee.Header().Get("Content-Type"), tee.body.Bytes())
	if model == "" {
		return
	}
	info, ok := u.cfg.Keys[key]
	if !ok {
		info = KeyInfo{ID: "key_unlisted", Project: "proj_default"}
	}
	cell := usageCell{provider: route[0], endpoint: route[1], day: u.cfg.Now().UTC().Truncate(24 * time.Hour), model: model, key: info}
	u.mu.Lock()
	defer u.mu.Unlock()
	c := u.book[cell]
	if c == nil {
		c = &usageCount{}
		u.book[cell] = c
	}
	c.requests++
	c.input += counts.input
	c.output += counts.output
	c.cacheRead += counts.cacheRead
	c.cacheWrite += counts.cacheWrite
}

// maxTeeBytes bounds what is kept of one answer to read its usage; the
// fake's answers are far smaller.
const maxTeeBytes = 16 << 20

// teeWriter passes an answer through and keeps a copy.
type teeWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	over   bool
}

func (t *teeWriter) WriteHeader(code int) {
	t.status = code
	t.ResponseWriter.WriteHeader(code)
}

func (t *teeWriter) Write(b []byte) (int, error) {
	if t.body.Len()+len(b) > maxTeeBytes {
		t.over = true
	} else {
		t.body.Write(b)
	}
	return t.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush streamed events through.
func (t *teeWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// wireUsage holds every usage field the four APIs send: Chat Completions
// and Embeddings (prompt_/completion_tokens), Responses (input_/
// output_tokens with details) and Messages (input_tokens without the cache,
// cache_read_/cache_creation_input_tokens).
type wireUsage struct {
	PromptTokens     *int64 `json:"prompt_tokens"`
	CompletionTokens *int64 `json:"completion_tokens"`
	PromptDetails    *struct {
		Cached *int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	InputTokens  *int64 `json:"input_tokens"`
	OutputTokens *int64 `json:"output_tokens"`
	InputDetails *struct {
		Cached *int64 `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	CacheRead     *int64 `json:"cache_read_input_tokens"`
	CacheCreation *int64 `json:"cache_creation_input_tokens"`
}

// merge takes every field later has: a stream reports usage in parts
// (Messages: input at message_start, the final output at message_delta).
func (u *wireUsage) merge(later *wireUsage) {
	if later == nil {
		return
	}
	for _, f := range []struct{ dst, src **int64 }{
		{&u.PromptTokens, &later.PromptTokens}, {&u.CompletionTokens, &later.CompletionTokens},
		{&u.InputTokens, &later.InputTokens}, {&u.OutputTokens, &later.OutputTokens},
		{&u.CacheRead, &later.CacheRead}, {&u.CacheCreation, &later.CacheCreation},
	} {
		if *f.src != nil {
			*f.dst = *f.src
		}
	}
	if later.PromptDetails != nil {
		u.PromptDetails = later.PromptDetails
	}
	if later.InputDetails != nil {
		u.InputDetails = later.InputDetails
	}
}

// counts normalises to the conventions: input includes cache reads and
// writes, whatever the wire said.
func (u *wireUsage) counts() usageCount {
	v := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	c := usageCount{cacheRead: v(u.CacheRead), cacheWrite: v(u.CacheCreation)}
	switch {
	case u.PromptTokens != nil: // Chat Completions, Embeddings
		c.input, c.output = *u.PromptTokens, v(u.CompletionTokens)
		if u.PromptDetails != nil {
			c.cacheRead = v(u.PromptDetails.Cached)
		}
	case u.CacheRead != nil || u.CacheCreation != nil: // Messages
		c.input, c.output = v(u.InputTokens)+c.cacheRead+c.cacheWrite, v(u.OutputTokens)
	default: // Responses
		c.input, c.output = v(u.InputTokens), v(u.OutputTokens)
		if u.InputDetails != nil {
			c.cacheRead = v(u.InputDetails.Cached)
		}
	}
	return c
}

// wirePart names a model and its usage.
type wirePart struct {
	Model string     `json:"model"`
	Usage *wireUsage `json:"usage"`
}

// wireAnswer is the part of a JSON answer or streamed event that names the
// model and usage: at the top (Chat, Embeddings, Messages, chunks,
// message_delta), in "response" (Responses events) or in "message"
// (message_start).
type wireAnswer struct {
	wirePart
	Response *wirePart `json:"response"`
	Message  *wirePart `json:"message"`
}

// readAnswer returns the model and usage of an answer as sent; the model is
// "" when the body is not an answer it can read.
func readAnswer(contentType string, body []byte) (string, usageCount) {
	var model string
	var u wireUsage
	take := func(b []byte) {
		var a wireAnswer
		if json.Unmarshal(b, &a) != nil {
			return
		}
		for _, part := range []*wirePart{&a.wirePart, a.Response, a.Message} {
			if part == nil {
				continue
			}
			if model == "" {
				model = part.Model
			}
			u.merge(part.Usage)
		}
	}
	if !strings.HasPrefix(contentType, "text/event-stream") {
		take(body)
		return model, u.counts()
	}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, maxTeeBytes)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "[DONE]" {
			take([]byte(data))
		}
	}
	return model, u.counts()
}
