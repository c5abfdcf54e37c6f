// Package fakeprovider is a local stand-in for paid LLM APIs. It speaks the
// real wire formats of OpenAI Chat Completions, the OpenAI Responses API and
// the Anthropic Messages API (JSON and server-sent events), so unmodified
// clients and their instrumentation can be tested against it, and its
// behaviour is configurable: which snapshot answers an alias, what the model
// says (a Responder: deterministic, a known distribution of outputs),
// which parameters are rejected, which requests fail, which responses omit
// usage.
//
// By default every answer is deterministic: the same input messages to the
// same snapshot always produce the same text.
package fakeprovider

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Config configures a Server. The zero value is usable.
type Config struct {
	// Models lists the snapshots served. Empty means DefaultModels().
	Models []Model
	// Responder decides every answer. Nil means Deterministic.
	Responder Responder
	// APIKey, when set, must arrive as "Authorization: Bearer <APIKey>"
	// (OpenAI APIs) or "x-api-key: <APIKey>" (Anthropic).
	APIKey string
	// MissingUsageRate is the fraction of responses sent without usage, as
	// some gateways and self-hosted servers do. Which ones follows arrival
	// order, so runs repeat.
	MissingUsageRate float64
	// PromptCache shapes cached_tokens in usage.
	PromptCache PromptCache
	// MaxBodyBytes bounds a request body. 0 means 8 MiB.
	MaxBodyBytes int64
	// Latency delays every answer of the model endpoints, as a model's
	// generation takes time: a benchmark of an app around the provider
	// then sees a provider's share of the latency, not a 1 ms answer.
	Latency time.Duration
	// Now stamps "created". Nil means time.Now.
	Now func() time.Time
	// Record, when set, receives every answer given (not errors), as it
	// was sent: the truth a test compares telemetry with. It is called
	// before the response is written and must be safe for concurrent use.
	Record func(Answer)
}

// Server is an http.Handler answering like the provider's API.
type Server struct {
	models       map[string]Model // by every name a request may use
	responder    Responder
	apiKey       string
	missingUsage *fraction
	cache        *promptCache
	maxBody      int64
	latency      time.Duration
	now          func() time.Time
	recordFn     func(Answer)
}

// New checks cfg and returns a Server.
func New(cfg Config) (*Server, error) {
	if cfg.PromptCache.MinTokens < 0 || cfg.PromptCache.Step < 0 {
		return nil, errors.New("fakeprovider: PromptCache sizes must not be negative")
	}
	if cfg.MaxBodyBytes < 0 || cfg.Latency < 0 {
		return nil, errors.New("fakeprovider: MaxBodyBytes and Latency must not be negative")
	}
	models := cfg.Models
	if len(models) == 0 {
		models = DefaultModels()
	}
	s := &Server{
		models:    make(map[string]Model),
		responder: cfg.Responder,
		apiKey:    cfg.APIKey,
		cache:     newPromptCache(cfg.PromptCache),
		maxBody:   cfg.MaxBodyBytes,
		latency:   cfg.Latency,
		now:       cfg.Now,
		recordFn:  cfg.Record,
	}
	for _, m := range models {
		if m.Snapshot == "" {
			return nil, errors.New("fakeprovider: a model has no snapshot name")
		}
		for _, name := range append([]string{m.Snapshot}, m.Aliases...) {
			if _, dup := s.models[name]; dup {
				return nil, fmt.Errorf("fakeprovider: model name %q is listed twice", name)
			}
			s.models[name] = m
		}
	}
	var err error
	if s.missingUsage, err = newFraction(cfg.MissingUsageRate); err != nil {
		return nil, fmt.Errorf("fakeprovider: MissingUsageRate: %w", err)
	}
	if s.maxBody == 0 {
		s.maxBody = 8 << 20
	}
	if s.responder == nil {
		s.responder = Deterministic
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// ServeHTTP answers like the provider. A model's answer first waits the
// configured latency.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	post := r.Method == http.MethodPost
	var answer func(http.ResponseWriter, *http.Request)
	switch {
	case post && r.URL.Path == "/v1/chat/completions":
		answer = func(w http.ResponseWriter, r *http.Request) { s.openAI(w, r, s.chatCompletions) }
	case post && r.URL.Path == "/v1/responses":
		answer = func(w http.ResponseWriter, r *http.Request) { s.openAI(w, r, s.responses) }
	case post && r.URL.Path == "/v1/embeddings":
		answer = func(w http.ResponseWriter, r *http.Request) { s.openAI(w, r, s.embeddings) }
	case post && r.URL.Path == "/v1/messages":
		answer = s.messages
	default:
		s.openAI(w, r, func(w http.ResponseWriter, r *http.Request) { invalidURL(r).write(w, nil) })
		return
	}
	if !s.wait(r.Context()) {
		return // the client is gone
	}
	answer(w, r)
}

// wait sleeps for the configured latency, and reports false if ctx ended
// first.
func (s *Server) wait(ctx context.Context) bool {
	if s.latency <= 0 {
		return true
	}
	t := time.NewTimer(s.latency)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// openAI does what every OpenAI endpoint does first: a request ID, and the
// API key check.
func (s *Server) openAI(w http.ResponseWriter, r *http.Request, handle http.HandlerFunc) {
	w.Header().Set("x-request-id", "req_"+randomString(32, hexDigits))
	if s.apiKey != "" {
		if apiErr := s.checkAuth(r); apiErr != nil {
			apiErr.write(w, nil)
			return
		}
	}
	handle(w, r)
}

func (s *Server) checkAuth(r *http.Request) *APIError {
	got := r.Header.Get("Authorization")
	if got == "" {
		return unauthorized("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
	}
	if subtle.ConstantTimeCompare([]byte(got), []byte("Bearer "+s.apiKey)) != 1 {
		// Unlike OpenAI, the message does not echo part of the key: it is a secret.
		return unauthorized("Incorrect API key provided.")
	}
	return nil
}

// Serve answers on ln until ctx is done, then shuts down gracefully.
func Serve(ctx context.Context, ln net.Listener, cfg Config) error {
	s, err := New(cfg)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	stop := context.AfterFunc(ctx, func() {
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	})
	defer stop()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("fakeprovider: serve: %w", err)
	}
	return nil
}

const (
	hexDigits = "0123456789abcdef"
	base62    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// randomString returns n characters drawn from alphabet (at most 256 long).
func randomString(n int, alphabet string) string {
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
