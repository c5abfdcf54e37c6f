// Command llmapp is a small support-assistant service instrumented with the
// OpenTelemetry Go SDK the way a production LLM application would be. See
// README.md for what its traces contain.
package main

import (
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/docketlabs/docket/fakeprovider"
)

func main() {
	if err := run(); err != nil {
		slog.Error("llmapp stopped", "err", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		listen          = flag.String("listen", envOr("LLMAPP_LISTEN", "127.0.0.1:8090"), "address to serve POST /ask on")
		otlpEndpoint    = flag.String("otlp-endpoint", envOr("LLMAPP_OTLP_ENDPOINT", "127.0.0.1:4317"), "OTLP/gRPC collector host:port (plaintext unless -otlp-tls)")
		otlpTLS         = flag.Bool("otlp-tls", false, "send OTLP over TLS, trusting the system's roots (SSL_CERT_FILE), as to a docket agent")
		providerURL     = flag.String("provider-url", os.Getenv("OPENAI_BASE_URL"), "OpenAI-compatible base URL ending in /v1; empty starts the built-in fake provider")
		model           = flag.String("model", envOr("LLMAPP_MODEL", "gpt-4o-mini"), "model to request")
		captureContent  = flag.Bool("capture-content", true, "record prompts and answers on GenAI spans (opt-in in the conventions; the Docket collector moves them out of the spans)")
		workers         = flag.Int("workers", 8, "worker goroutines")
		queueSize       = flag.Int("queue", 256, "jobs that may wait for a worker before /ask answers 503")
		jobTimeout      = flag.Duration("job-timeout", 30*time.Second, "time limit of one question")
		customers       = flag.Int("customers", 1000, "demo customers to seed (user0000@example.com …)")
		fakeFailureRate = flag.Float64("fake-failure-rate", 0, "built-in provider: fraction of calls answered 429/500/503")
		fakeNoUsageRate = flag.Float64("fake-missing-usage-rate", 0, "built-in provider: fraction of responses without usage")
		flushTimeout    = flag.Duration("flush-timeout", 60*time.Second, "time the SDK may take at exit to export the spans it still holds")
		pprofListen     = flag.String("pprof", "", "address to serve Go's /debug/pprof on, to profile the instrumentation's cost; empty: off")
		export          = defaultExport
	)
	flag.IntVar(&export.QueueSize, "span-queue", defaultExport.QueueSize, "spans the SDK's batch processor holds before -span-block applies")
	flag.IntVar(&export.BatchSize, "span-batch", defaultExport.BatchSize, "spans per OTLP export request")
	flag.DurationVar(&export.BatchTimeout, "span-batch-timeout", defaultExport.BatchTimeout, "longest a span waits in the SDK's batch processor before its batch is exported")
	flag.BoolVar(&export.Block, "span-block", defaultExport.Block, "when the span queue is full, wait for room instead of dropping (the SDK default drops)")
	flag.Parse()
	if *workers < 1 || *queueSize < 0 || *customers < 0 || *jobTimeout <= 0 || *flushTimeout <= 0 || export.BatchTimeout <= 0 || export.QueueSize < 1 || export.BatchSize < 1 || export.BatchSize > export.QueueSize {
		return errors.New("-workers must be ≥ 1, -queue and -customers ≥ 0, -job-timeout, -flush-timeout and -span-batch-timeout > 0, 1 ≤ -span-batch ≤ -span-queue")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	tr, err := newTracerProvider(ctx, *otlpEndpoint, *otlpTLS, export)
	if err != nil {
		return err
	}
	defer tr.shutdown(*flushTimeout)
	tp := tr.provider
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { slog.Warn("opentelemetry", "err", err) }))

	if *providerURL == "" {
		if *providerURL, err = startFakeProvider(ctx, *fakeFailureRate, *fakeNoUsageRate); err != nil {
			return err
		}
	}
	key, err := pseudonymKey()
	if err != nil {
		return err
	}
	a, err := newApp(appConfig{
		TracerProvider: tp,
		Propagator:     propagation.TraceContext{},
		ProviderURL:    *providerURL,
		APIKey:         os.Getenv("OPENAI_API_KEY"),
		Model:          *model,
		CaptureContent: *captureContent,
		PseudonymKey:   key,
		QueueSize:      *queueSize,
		Workers:        *workers,
		JobTimeout:     *jobTimeout,
		Customers:      *customers,
	})
	if err != nil {
		return err
	}

	workerCtx, stopWorkers := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range *workers {
		wg.Go(func() { a.work(workerCtx) })
	}

	if *pprofListen != "" {
		go servePprof(*pprofListen)
	}
	srv := &http.Server{Addr: *listen, Handler: a.handler(), ReadHeaderTimeout: 5 * time.Second}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.ListenAndServe() }()
	slog.Info("llmapp listening", "addr", *listen, "provider", *providerURL, "otlp", *otlpEndpoint, "model", *model)

	select {
	case err = <-serveErr:
		err = fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
		// Stop taking requests and let the ones in flight finish (their
		// handlers wait for the workers), then stop the workers.
		shutdownCtx, cancel := context.WithTimeout(context.Background(), *jobTimeout+5*time.Second)
		defer cancel()
		err = srv.Shutdown(shutdownCtx)
	}
	stopWorkers()
	wg.Wait()
	return err
}

func newTracerProvider(ctx context.Context, endpoint string, useTLS bool, cfg exportConfig) (*tracing, error) {
	opts := append(cfg.exporterOptions(), otlptracegrpc.WithEndpoint(endpoint))
	if !useTLS {
		opts = append(opts, otlptracegrpc.WithInsecure())
	}
	exporter, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName("llmapp"), semconv.ServiceVersion("0.1.0")),
		resource.WithFromEnv(), // OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME
		resource.WithTelemetrySDK(),
		resource.WithHost(),
	)
	if err != nil {
		return nil, fmt.Errorf("resource: %w", err)
	}
	self, err := newSDKSelfMetrics(ctx, res, endpoint, useTLS)
	if err != nil {
		return nil, err
	}
	t := &tracing{self: self}
	t.provider = sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(t.account.Exporter(exporter), cfg.spanProcessorOptions()...),
		sdktrace.WithSpanProcessor(t.account.Processor()),
		sdktrace.WithResource(res))
	return t, nil
}

// tracing is the app's tracer provider and the accounts of what it lost.
type tracing struct {
	provider *sdktrace.TracerProvider
	self     *sdkSelfMetrics
	account  spanAccount
}

// shutdown flushes what the batch processor still holds, then says what
// never reached the collector: spans lost before it are invisible to it.
func (t *tracing) shutdown(timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := t.provider.Shutdown(ctx); err != nil {
		slog.Warn("trace export at shutdown", "err", err, "timeout", timeout)
	}
	dropped, err := t.self.DroppedSpans(ctx)
	if err != nil {
		slog.Warn("spans dropped by the SDK: unknown", "err", err)
	}
	lost := t.account.Lost()
	level := slog.LevelInfo
	if lost > 0 || dropped > 0 {
		level = slog.LevelWarn
	}
	slog.Log(ctx, level, "spans not exported", "ended", t.account.ended.Load(), "not_exported", lost, "dropped_queue_full", dropped)
	if err := t.self.Shutdown(ctx); err != nil {
		slog.Warn("the SDK's dropped-span count did not reach the collector", "err", err)
	}
}

// servePprof serves the runtime's profiles on their own address, never on
// the app's, where anyone who can ask a question could read them.
func servePprof(addr string) {
	srv := &http.Server{Addr: addr, Handler: pprofHandler(), ReadHeaderTimeout: 5 * time.Second}
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("pprof server stopped", "err", err)
	}
}

func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// startFakeProvider serves the built-in OpenAI stand-in on a free loopback
// port and returns its base URL.
func startFakeProvider(ctx context.Context, failureRate, missingUsageRate float64) (string, error) {
	respond, err := fakeprovider.FailFraction(failureRate, fakeprovider.Deterministic,
		fakeprovider.RateLimited(2*time.Second), fakeprovider.ServerError(), fakeprovider.Overloaded())
	if err != nil {
		return "", err
	}
	cfg := fakeprovider.Config{
		Responder:        respond,
		MissingUsageRate: missingUsageRate,
		// The demo's prompts are far shorter than OpenAI's 1024-token caching
		// threshold; a lower one makes cached tokens show up as they do for
		// applications with long system prompts.
		PromptCache: fakeprovider.PromptCache{MinTokens: 32, Step: 16},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("fake provider: %w", err)
	}
	go func() {
		if err := fakeprovider.Serve(ctx, ln, cfg); err != nil {
			slog.Error("fake provider stopped", "err", err)
		}
	}()
	return "http://" + ln.Addr().String() + "/v1", nil
}

// pseudonymKey returns the secret behind enduser.pseudo.id. Without
// LLMAPP_PSEUDONYM_KEY a random one is made, and pseudonyms change on restart.
func pseudonymKey() ([]byte, error) {
	if k := os.Getenv("LLMAPP_PSEUDONYM_KEY"); k != "" {
		return []byte(k), nil
	}
	slog.Info("LLMAPP_PSEUDONYM_KEY is not set: using a random key, so enduser.pseudo.id changes on restart")
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("pseudonym key: %w", err)
	}
	return key, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
