package main

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

const (
	instrumentationName = "github.com/docketlabs/docket/examples/llmapp"
	askRoute            = "/ask"
	queueName           = "ask-jobs"
	questionCost        = 1 // credits a question costs; a customer needs at least this many
	maxAskBody          = 64 << 10
	maxQuestionBytes    = 4000
	maxEmailBytes       = 254
	documentsPerPrompt  = 3

	instructions = "You are the support assistant of Acme Cloud. Answer in at most three sentences, " +
		"using only the context articles. If they do not answer the question, say so and offer to open a ticket. " +
		"Address the customer by name. Never reveal internal notes, credentials or other customers' data."
)

type appConfig struct {
	TracerProvider trace.TracerProvider
	Propagator     propagation.TextMapPropagator
	ProviderURL    string // OpenAI-compatible base URL, e.g. https://api.openai.com/v1
	APIKey         string
	Model          string
	CaptureContent bool
	PseudonymKey   []byte // secret for enduser.pseudo.id
	QueueSize      int
	Workers        int // goroutines that answer jobs, each with its connection to the provider
	JobTimeout     time.Duration
	Customers      int // how many demo customers to seed
}

// app answers support questions: HTTP handler → queue (producer span) →
// worker (consumer span), which looks
// the customer up in the database, retrieves help articles and asks the LLM.
type app struct {
	tracer     trace.Tracer
	tp         trace.TracerProvider
	propagator propagation.TextMapPropagator
	customers  *customerStore
	kb         *knowledgeBase
	chat       *chatClient
	model      string
	pseudoKey  []byte
	jobs       chan job
	jobTimeout time.Duration
}

// job is one question on its way to a worker. The trace context travels in a
// carrier, as it would through a real message queue.
type job struct {
	carrier propagation.MapCarrier
	ask     askRequest
	endUser string
	done    chan<- jobResult // buffered: a worker never waits for a handler that gave up
}

type jobResult struct {
	answer chatResult
	err    error
}

var errUnknownCustomer = errors.New("no active customer with that email")

func newApp(cfg appConfig) (*app, error) {
	if len(cfg.PseudonymKey) == 0 {
		return nil, errors.New("app: a pseudonym key is required")
	}
	tracer := cfg.TracerProvider.Tracer(instrumentationName)
	// Each worker keeps its connection to the provider: with the default
	// two idle connections per host, eight workers dialled anew for most
	// calls (5% of the app's CPU, profiled under bench/appoverhead's load).
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = max(2, cfg.Workers)
	httpClient := &http.Client{
		// The client span of every provider request becomes a child of the
		// GenAI span, and the trace context is sent along.
		Transport: otelhttp.NewTransport(transport,
			otelhttp.WithTracerProvider(cfg.TracerProvider), otelhttp.WithPropagators(cfg.Propagator)),
		Timeout: cfg.JobTimeout,
	}
	chat, err := newChatClient(cfg.ProviderURL, cfg.APIKey, httpClient, tracer, cfg.CaptureContent)
	if err != nil {
		return nil, err
	}
	return &app{
		tracer:     tracer,
		tp:         cfg.TracerProvider,
		propagator: cfg.Propagator,
		customers:  newCustomerStore(tracer, cfg.Customers),
		kb:         newKnowledgeBase("support-kb", tracer, cfg.CaptureContent),
		chat:       chat,
		model:      cfg.Model,
		pseudoKey:  cfg.PseudonymKey,
		jobs:       make(chan job, cfg.QueueSize),
		jobTimeout: cfg.JobTimeout,
	}, nil
}

// handler serves POST /ask; otelhttp makes the server span ("POST /ask").
func (a *app) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+askRoute, a.handleAsk)
	return otelhttp.NewHandler(mux, "llmapp",
		otelhttp.WithTracerProvider(a.tp), otelhttp.WithPropagators(a.propagator))
}

type askRequest struct {
	User     string `json:"user"` // the customer's email address
	Question string `json:"question"`
}

type askResponse struct {
	Answer     string `json:"answer,omitempty"`
	Model      string `json:"model,omitempty"`
	ResponseID string `json:"response_id,omitempty"`
	Error      string `json:"error,omitempty"`
	// TraceID lets a user quote their request in a complaint.
	TraceID string `json:"trace_id"`
}

func (a *app) handleAsk(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	span := trace.SpanFromContext(ctx) // the server span otelhttp started
	span.SetAttributes(semconv.HTTPRoute(askRoute))
	sc := span.SpanContext()
	// W3C Trace Context Level 2 names this response header traceresponse.
	w.Header().Set("traceresponse", fmt.Sprintf("00-%s-%s-%s", sc.TraceID(), sc.SpanID(), sc.TraceFlags()))
	reply := func(status int, resp askResponse) {
		resp.TraceID = sc.TraceID().String()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(resp)
	}

	ask, status, err := decodeAsk(w, r)
	if err != nil {
		reply(status, askResponse{Error: err.Error()})
		return
	}
	endUser := a.pseudonym(ask.User)
	span.SetAttributes(semconv.EnduserPseudoID(endUser))

	done := make(chan jobResult, 1)
	if !a.enqueue(ctx, job{carrier: propagation.MapCarrier{}, ask: ask, endUser: endUser, done: done}) {
		w.Header().Set("Retry-After", "1")
		reply(http.StatusServiceUnavailable, askResponse{Error: "busy, try again"})
		return
	}

	select {
	case res := <-done:
		switch {
		case res.err == nil:
			reply(http.StatusOK, askResponse{Answer: res.answer.Text, Model: res.answer.ResponseModel, ResponseID: res.answer.ResponseID})
		case errors.Is(res.err, errUnknownCustomer):
			reply(http.StatusNotFound, askResponse{Error: errUnknownCustomer.Error()})
		case errorType(res.err) == "timeout":
			reply(http.StatusGatewayTimeout, askResponse{Error: "the model did not answer in time"})
		default:
			reply(http.StatusBadGateway, askResponse{Error: "the model could not answer"})
		}
	case <-ctx.Done():
		// The client is gone; the worker finishes and records the job anyway.
	}
}

// enqueue puts j on the queue under a producer span, whose context travels
// with the job, and reports whether the queue had room.
func (a *app) enqueue(ctx context.Context, j job) bool {
	ctx, span := a.tracer.Start(ctx, "send "+queueName,
		trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(
			semconv.MessagingOperationTypeSend,
			semconv.MessagingOperationName("send"),
			semconv.MessagingDestinationName(queueName),
		))
	defer span.End()
	a.propagator.Inject(ctx, j.carrier)
	select {
	case a.jobs <- j:
		return true
	default:
		span.SetAttributes(semconv.ErrorTypeKey.String("queue_full"))
		span.SetStatus(codes.Error, "queue full")
		return false
	}
}

// decodeAsk reads and checks the request body. Its errors describe what is
// wrong without quoting the input.
func decodeAsk(w http.ResponseWriter, r *http.Request) (askRequest, int, error) {
	var ask askRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxAskBody)).Decode(&ask); err != nil {
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			return ask, http.StatusRequestEntityTooLarge, fmt.Errorf("request body is over %d bytes", maxAskBody)
		}
		return ask, http.StatusBadRequest, errors.New(`body must be JSON: {"user": "<email>", "question": "<text>"}`)
	}
	ask.User = strings.ToLower(strings.TrimSpace(ask.User))
	ask.Question = strings.TrimSpace(ask.Question)
	switch {
	case ask.User == "" || len(ask.User) > maxEmailBytes || !strings.Contains(ask.User, "@") || !cleanText(ask.User) || strings.ContainsFunc(ask.User, unicode.IsSpace):
		return ask, http.StatusBadRequest, errors.New("user must be an email address")
	case ask.Question == "":
		return ask, http.StatusBadRequest, errors.New("question is empty")
	case len(ask.Question) > maxQuestionBytes:
		return ask, http.StatusBadRequest, fmt.Errorf("question is over %d bytes", maxQuestionBytes)
	case !cleanText(ask.Question):
		return ask, http.StatusBadRequest, errors.New("question must be UTF-8 text without control characters")
	}
	return ask, 0, nil
}

// cleanText reports whether s is valid UTF-8 without control characters
// other than newlines and tabs. (JSON decoding replaces invalid UTF-8 with
// U+FFFD, which is rejected here too.)
func cleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return r == utf8.RuneError || (unicode.IsControl(r) && r != '\n' && r != '\t')
	})
}

// pseudonym derives enduser.pseudo.id: an HMAC of the email under the app's
// secret. It is stable per user, so calls of one user can be grouped, but
// cannot be turned back into the email without the secret (a bare hash of an
// email could, by hashing candidate addresses).
func (a *app) pseudonym(email string) string {
	mac := hmac.New(sha256.New, a.pseudoKey)
	mac.Write([]byte(email))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// work processes jobs until ctx is done. Run several for parallelism.
func (a *app) work(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case j := <-a.jobs:
			j.done <- a.process(j)
		}
	}
}

func (a *app) process(j job) jobResult {
	// The job's own deadline, not the worker's lifetime, bounds the work.
	ctx, cancel := context.WithTimeout(a.propagator.Extract(context.Background(), j.carrier), a.jobTimeout)
	defer cancel()
	ctx, span := a.tracer.Start(ctx, "process "+queueName,
		trace.WithSpanKind(trace.SpanKindConsumer),
		trace.WithAttributes(
			// An in-process channel has no messaging.system value of its own.
			semconv.MessagingOperationTypeProcess,
			semconv.MessagingOperationName("process"),
			semconv.MessagingDestinationName(queueName),
		))
	defer span.End()

	answer, err := a.answer(ctx, j)
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(jobErrorType(err)))
		span.SetStatus(codes.Error, err.Error())
		slog.WarnContext(ctx, "ask failed", "error.type", jobErrorType(err), "trace_id", span.SpanContext().TraceID())
	}
	return jobResult{answer: answer, err: err}
}

func jobErrorType(err error) string {
	if errors.Is(err, errUnknownCustomer) {
		return "unknown_customer"
	}
	return errorType(err)
}

func (a *app) answer(ctx context.Context, j job) (chatResult, error) {
	c, found, err := a.customers.findActive(ctx, j.ask.User, questionCost)
	if err != nil {
		return chatResult{}, err
	}
	if !found {
		return chatResult{}, errUnknownCustomer
	}
	docs, err := a.kb.search(ctx, j.ask.Question, documentsPerPrompt)
	if err != nil {
		return chatResult{}, err
	}
	return a.chat.complete(ctx, chatParams{
		Model:        a.model,
		Instructions: instructions,
		Prompt:       buildPrompt(c, docs, j.ask.Question),
		Temperature:  0.2,
		TopP:         1,
		MaxTokens:    300,
		Seed:         42,
		EndUser:      j.endUser,
	})
}

func buildPrompt(c customer, docs []retrieved, question string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Customer: %s (plan %s, %d credits left)\n\nContext articles:\n", c.Name, c.Plan, c.Credits)
	if len(docs) == 0 {
		b.WriteString("(none found)\n")
	}
	for _, d := range docs {
		fmt.Fprintf(&b, "[%s %s] %s: %s\n", d.ID, d.Version, d.doc.Title, d.doc.Text)
	}
	fmt.Fprintf(&b, "\nQuestion: %s", question)
	return b.String()
}
