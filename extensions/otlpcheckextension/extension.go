package otlpcheckextension

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/http"
	"strings"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/extensionmiddleware"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/pprofile/pprofileotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
)

// The OTLP receiver (v0.161.0, otlphttp.go) answers a JSON request whose
// decoding error it cannot encode as JSON — the error quotes the body, so
// a protobuf body labelled application/json, or any body with invalid
// UTF-8 near the error, does it — with this 500, and the sender retries a
// request that can never succeed.
var receiverFallback = []byte(`{"code": 13, "message": "failed to marshal error message"}`)

const jsonContentType = "application/json"

type otlpCheck struct {
	component.StartFunc
	component.ShutdownFunc
}

var _ extensionmiddleware.HTTPServer = (*otlpCheck)(nil)

func (c *otlpCheck) GetHTTPHandler(context.Context) (extensionmiddleware.WrapHTTPHandlerFunc, error) {
	return func(_ context.Context, next http.Handler) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serve(next, w, r) }), nil
	}, nil
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
