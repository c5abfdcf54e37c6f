package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// chatClient calls an OpenAI Chat Completions endpoint and records one
// GenAI client span per call, following the OpenTelemetry GenAI semantic
// conventions.
type chatClient struct {
	endpoint   string // …/v1/chat/completions
	apiKey     string
	httpClient *http.Client
	tracer     trace.Tracer
	serverAddr string
	serverPort int
	// captureContent records prompts and answers on the span. The conventions
	// make this opt-in because content is likely to hold personal data.
	captureContent bool
}

// maxResponseBytes bounds what is read from the provider.
const maxResponseBytes = 8 << 20

func newChatClient(baseURL, apiKey string, httpClient *http.Client, tracer trace.Tracer, captureContent bool) (*chatClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("chat: provider URL must be http(s)://host[:port]/path, got %q", baseURL)
	}
	port := 443
	if u.Scheme == "http" {
		port = 80
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("chat: provider URL port: %w", err)
		}
	}
	return &chatClient{
		endpoint:       u.JoinPath("chat", "completions").String(),
		apiKey:         apiKey,
		httpClient:     httpClient,
		tracer:         tracer,
		serverAddr:     u.Hostname(),
		serverPort:     port,
		captureContent: captureContent,
	}, nil
}

type chatParams struct {
	Model        string
	Instructions string // sent as the system message
	Prompt       string // sent as the user message
	Temperature  float64
	TopP         float64
	MaxTokens    int
	Seed         int
	EndUser      string // pseudonymous end-user id, recorded as enduser.pseudo.id
}

type chatResult struct {
	Text          string
	ResponseID    string
	ResponseModel string
}

// The request and response bodies, reduced to the fields this app uses.
type (
	chatMessage struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	}
	chatRequest struct {
		Model               string        `json:"model"`
		Messages            []chatMessage `json:"messages"`
		Temperature         float64       `json:"temperature"`
		TopP                float64       `json:"top_p"`
		MaxCompletionTokens int           `json:"max_completion_tokens"`
		Seed                int           `json:"seed"`
	}
	chatResponse struct {
		ID                string `json:"id"`
		Model             string `json:"model"`
		ServiceTier       string `json:"service_tier"`
		SystemFingerprint string `json:"system_fingerprint"`
		Choices           []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		// Pointers: a provider that sends no usage must leave the token
		// attributes unset, not zero.
		Usage *struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails *struct {
				CachedTokens *int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			CompletionTokensDetails *struct {
				ReasoningTokens *int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	errorResponse struct {
		Error struct {
			Type string `json:"type"`
			Code string `json:"code"`
		} `json:"error"`
	}
)

// providerError is a non-2xx answer. It keeps the provider's error type and
// code but not its message, which may quote the request.
type providerError struct {
	Status int
	Type   string
	Code   string
}

func (e *providerError) Error() string {
	return fmt.Sprintf("chat: provider answered %d (type %q, code %q)", e.Status, e.Type, e.Code)
}

// errInvalidResponse marks a 2xx answer the client cannot use.
var errInvalidResponse = errors.New("chat: invalid provider response")

func (c *chatClient) complete(ctx context.Context, p chatParams) (chatResult, error) {
	// Attributes that samplers may use are set when the span starts.
	ctx, span := c.tracer.Start(ctx, "chat "+p.Model,
		trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(
			semconv.GenAIOperationNameChat,
			semconv.GenAIProviderNameOpenAI,
			semconv.GenAIRequestModel(p.Model),
			semconv.ServerAddress(c.serverAddr),
			semconv.ServerPort(c.serverPort),
			semconv.GenAIRequestTemperature(p.Temperature),
			semconv.GenAIRequestTopP(p.TopP),
			semconv.GenAIRequestMaxTokens(p.MaxTokens),
			semconv.GenAIRequestSeed(p.Seed),
			semconv.EnduserPseudoID(p.EndUser),
		))
	defer span.End()
	// An unsampled span drops its attributes: building the content's JSON
	// for it would cost an untraced app CPU for nothing.
	capture := c.captureContent && span.IsRecording()

	req := chatRequest{
		Model: p.Model,
		Messages: []chatMessage{
			{Role: "system", Content: p.Instructions},
			{Role: "user", Content: p.Prompt},
		},
		Temperature:         p.Temperature,
		TopP:                p.TopP,
		MaxCompletionTokens: p.MaxTokens,
		Seed:                p.Seed,
	}
	if capture {
		span.SetAttributes(
			semconv.GenAISystemInstructionsKey.String(mustJSON([]textPart{{Type: "text", Content: p.Instructions}})),
			semconv.GenAIInputMessagesKey.String(mustJSON([]inputMessage{{Role: "user", Parts: []textPart{{Type: "text", Content: p.Prompt}}}})),
		)
	}

	resp, err := c.post(ctx, req)
	if err != nil {
		span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
		span.SetStatus(codes.Error, err.Error())
		return chatResult{}, err
	}

	finishReasons := make([]string, len(resp.Choices))
	for i, ch := range resp.Choices {
		finishReasons[i] = ch.FinishReason
	}
	span.SetAttributes(
		semconv.GenAIResponseID(resp.ID),
		semconv.GenAIResponseModel(resp.Model),
		semconv.GenAIResponseFinishReasons(finishReasons...),
		semconv.OpenAIResponseServiceTier(resp.ServiceTier),
		semconv.OpenAIResponseSystemFingerprint(resp.SystemFingerprint),
	)
	span.SetAttributes(usageAttributes(resp)...)
	if capture {
		span.SetAttributes(semconv.GenAIOutputMessagesKey.String(mustJSON(outputMessages(resp))))
	}
	return chatResult{Text: resp.Choices[0].Message.Content, ResponseID: resp.ID, ResponseModel: resp.Model}, nil
}

// outputMessages is the response's choices as the conventions' content.
func outputMessages(resp *chatResponse) []outputMessage {
	outputs := make([]outputMessage, len(resp.Choices))
	for i, ch := range resp.Choices {
		outputs[i] = outputMessage{
			Role:         "assistant",
			Parts:        []textPart{{Type: "text", Content: ch.Message.Content}},
			FinishReason: ch.FinishReason,
		}
	}
	return outputs
}

// usageAttributes records what the provider reported, and nothing it did not.
func usageAttributes(resp *chatResponse) []attribute.KeyValue {
	u := resp.Usage
	if u == nil {
		return nil
	}
	attrs := []attribute.KeyValue{
		semconv.GenAIUsageInputTokens(u.PromptTokens),
		semconv.GenAIUsageOutputTokens(u.CompletionTokens),
	}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
		attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(*d.CachedTokens))
	}
	if d := u.CompletionTokensDetails; d != nil && d.ReasoningTokens != nil {
		attrs = append(attrs, semconv.GenAIUsageReasoningOutputTokens(*d.ReasoningTokens))
	}
	return attrs
}

func (c *chatClient) post(ctx context.Context, body chatRequest) (*chatResponse, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("chat: encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	httpResp, err := c.httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("chat: %w", err)
	}
	defer httpResp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(httpResp.Body, maxResponseBytes))
	if err != nil {
		return nil, fmt.Errorf("chat: read response: %w", err)
	}
	if httpResp.StatusCode/100 != 2 {
		var e errorResponse
		_ = json.Unmarshal(raw, &e) // a body that is not OpenAI's error format still leaves the status
		return nil, &providerError{Status: httpResp.StatusCode, Type: e.Error.Type, Code: e.Error.Code}
	}
	var resp chatResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("%w: %w", errInvalidResponse, err)
	}
	if len(resp.Choices) == 0 {
		return nil, fmt.Errorf("%w: no choices", errInvalidResponse)
	}
	return &resp, nil
}

// errorType is the low-cardinality error.type of a failed call: the
// provider's error code or else the HTTP status, "timeout",
// "invalid_response", or the conventions' fallback "_OTHER".
func errorType(err error) string {
	if pe, ok := errors.AsType[*providerError](err); ok {
		if pe.Code != "" {
			return pe.Code
		}
		// OpenAI sends 500 and 503 with the same type and no code; the
		// status keeps them apart.
		return strconv.Itoa(pe.Status)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return "timeout"
	}
	if errors.Is(err, errInvalidResponse) {
		return "invalid_response"
	}
	return semconv.ErrorTypeOther.Value.AsString()
}

// Content in the conventions' JSON format: messages made of typed parts.
type (
	textPart struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	inputMessage struct {
		Role  string     `json:"role"`
		Parts []textPart `json:"parts"`
	}
	outputMessage struct {
		Role         string     `json:"role"`
		Parts        []textPart `json:"parts"`
		FinishReason string     `json:"finish_reason"`
	}
)

// mustJSON encodes values made only of strings and slices, which cannot fail.
func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
