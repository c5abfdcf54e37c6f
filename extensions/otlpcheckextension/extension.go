package otlpcheckextension

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/client"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	nooptrace "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/hostext"
)

// The OTLP receiver (v0.161.0, otlphttp.go) answers a JSON request whose
// decoding error it cannot encode as JSON — the error quotes the body, so
// a protobuf body labelled application/json, or any body with invalid
// UTF-8 near the error, does it — with this 500, and the sender retries a
// request that can never succeed.
var receiverFallback = []byte(`{"code": 13, "message": "failed to marshal error message"}`)

const (
	jsonContentType     = "application/json"
	protobufContentType = "application/x-protobuf"
)

type otlpCheck struct {
	component.ShutdownFunc
	cfg    *Config
	logger *zap.Logger
	// account counts the requests refused as malformed.
	account *completeness.Account
	// resolver is the configured authenticator, set at Start.
	resolver tenantResolver
}

// tenantResolver is what the configured authenticator (tenantauth) offers:
// the tenant a request's credentials name, without counting a refusal as
// its Authenticate does (the receiver's own call counts those).
type tenantResolver interface {
	TenantOf(ctx context.Context, headers map[string][]string) (string, error)
}

var (
	_ extensionmiddleware.HTTPServer = (*otlpCheck)(nil)
	_ extensionmiddleware.GRPCServer = (*otlpCheck)(nil)
)

func (c *otlpCheck) Start(_ context.Context, host component.Host) error {
	if c.cfg.Authenticator == (component.ID{}) {
		return nil
	}
	r, err := hostext.Find[tenantResolver](host, c.cfg.Authenticator, "tenant-resolving authenticator")
	if err != nil {
		return fmt.Errorf("otlpcheck: %w (use tenantauth)", err)
	}
	c.resolver = r
	return nil
}

func (c *otlpCheck) GetHTTPHandler(context.Context) (extensionmiddleware.WrapHTTPHandlerFunc, error) {
	return func(ctx context.Context, next http.Handler) (http.Handler, error) {
		decoding, err := c.decompressor(ctx, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(next, w, r) }))
		if err != nil {
			return nil, err
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sw := &statusWriter{ResponseWriter: w}
			decoding.ServeHTTP(sw, r)
			if r.Method == http.MethodPost && malformedStatus(sw.code) {
				c.account.Refuse(httpTenant(r), completeness.RequestMalformed)
			}
		}), nil
	}, nil
}

// decompressor decodes the body's Content-Encoding in front of next, with
// confighttp's own decoders (the receiver's default set), and answers a
// body that fails to decode with 400. The receiver decodes before any
// middleware, where such a refusal cannot be counted, unless it is told
// to leave the encoding alone (compression_algorithms: []); a body it did
// decode arrives here without the header and passes through.
func (c *otlpCheck) decompressor(ctx context.Context, next http.Handler) (http.Handler, error) {
	sc := confighttp.NewDefaultServerConfig()
	sc.MaxRequestBodySize = c.cfg.MaxRequestBodySize
	// Only the handler chain is used; its own telemetry would count every
	// request a second time.
	set := component.TelemetrySettings{Logger: c.logger, TracerProvider: nooptrace.NewTracerProvider(), MeterProvider: noopmetric.NewMeterProvider()}
	srv, err := sc.ToServer(ctx, nil, set, next, confighttp.WithErrorHandler(refuseEncoding))
	if err != nil {
		return nil, fmt.Errorf("otlpcheck: decompressor: %w", err)
	}
	return srv.Handler, nil
}

// refuseEncoding answers a body whose Content-Encoding is unknown or fails
// to decode with 400, as the receiver does for protobuf and JSON (its
// fallback for other content types is a 500, which senders retry). The
// decoder's message is not passed on: it quotes the sender's header, which
// need not even be valid UTF-8.
func refuseEncoding(w http.ResponseWriter, r *http.Request, _ string, _ int) {
	const msg = "request body could not be decoded from its Content-Encoding"
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == protobufContentType {
		b, err := proto.Marshal(status.New(codes.InvalidArgument, msg).Proto())
		if err != nil {
			panic(err) // a status with a constant message always encodes
		}
		w.Header().Set("Content-Type", protobufContentType)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write(b)
		return
	}
	writeStatus(w, http.StatusBadRequest, codes.InvalidArgument, msg)
}

// malformedStatus tells the answers the receiver and this middleware give
// a body they cannot decode: 400 (an oversized body included) and 415.
func malformedStatus(code int) bool {
	return code == http.StatusBadRequest || code == http.StatusRequestEntityTooLarge || code == http.StatusUnsupportedMediaType
}

// httpTenant is the tenant the receiver's authenticator found: on
// OTLP/HTTP it runs before the middlewares, so a refused body's sender is
// known. Without an authenticator (the loopback dev shape), and for a
// relay (an agent, whose request carries the tenants it stamped), the
// tenant is in the body that could not be read.
func httpTenant(r *http.Request) string {
	if auth := client.FromContext(r.Context()).Auth; auth != nil {
		if t, ok := auth.GetAttribute(conventions.AuthTenantAttribute).(string); ok && conventions.ValidTenant(t) {
			return t
		}
	}
	return conventions.UnknownTenant
}

// statusWriter remembers the status of the answer.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func serve(next http.Handler, w http.ResponseWriter, r *http.Request) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if r.Method != http.MethodPost || mt != jsonContentType {
		// The receiver answers these itself: 405, 415, and protobuf
		// decoding errors as 400.
		next.ServeHTTP(w, r)
		return
	}
	// The body is bounded by the server's max_request_body_size.
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// As the receiver answers for protobuf, an oversized body included.
		writeStatus(w, http.StatusBadRequest, codes.InvalidArgument, "request body could not be read (or is larger than the server accepts)")
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	catcher := &fallbackCatcher{ResponseWriter: w}
	next.ServeHTTP(catcher, r)
	if !catcher.caught {
		return
	}
	if bytes.Equal(catcher.buf.Bytes(), receiverFallback) && decode(r.URL.Path, body) != nil {
		// No part of the body goes into the answer: it may be content.
		writeStatus(w, http.StatusBadRequest, codes.InvalidArgument, "request body is not valid OTLP/JSON for "+signalOf(r.URL.Path))
		return
	}
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = w.Write(catcher.buf.Bytes())
}

// fallbackCatcher holds back a JSON 500 until it is known whether it is
// the receiver's fallback for a request it could not decode.
type fallbackCatcher struct {
	http.ResponseWriter
	caught bool
	buf    bytes.Buffer
}

func (c *fallbackCatcher) WriteHeader(code int) {
	if code == http.StatusInternalServerError && c.Header().Get("Content-Type") == jsonContentType {
		c.caught = true
		return
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *fallbackCatcher) Write(p []byte) (int, error) {
	if c.caught {
		return c.buf.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

func signalOf(path string) string {
	for _, s := range []string{"metrics", "logs", "profiles"} {
		if strings.HasSuffix(path, "/"+s) {
			return s
		}
	}
	return "traces"
}

// decode decodes the body as the receiver does for the path's signal.
func decode(path string, body []byte) error {
	switch signalOf(path) {
	case "metrics":
		return pmetricotlp.NewExportRequest().UnmarshalJSON(body)
	case "logs":
		return plogotlp.NewExportRequest().UnmarshalJSON(body)
	case "profiles":
		return pprofileotlp.NewExportRequest().UnmarshalJSON(body)
	}
	return ptraceotlp.NewExportRequest().UnmarshalJSON(body)
}

// writeStatus answers with an OTLP status message in JSON.
func writeStatus(w http.ResponseWriter, httpCode int, code codes.Code, msg string) {
	b, err := protojson.Marshal(status.New(code, msg).Proto())
	if err != nil {
		// msg is one of this file's constants: it always encodes.
		panic(err)
	}
	w.Header().Set("Content-Type", jsonContentType)
	w.WriteHeader(httpCode)
	_, _ = w.Write(b)
}
