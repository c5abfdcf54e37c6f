package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// chatRequest is the part of a Chat Completions request the server reads.
// Fields it does not know are ignored.
type chatRequest struct {
	Model               string         `json:"model"`
	Messages            []chatMessage  `json:"messages"`
	Temperature         *float64       `json:"temperature"`
	TopP                *float64       `json:"top_p"`
	MaxTokens           *int           `json:"max_tokens"`
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	N                   *int           `json:"n"`
	Seed                *int64         `json:"seed"`
	Stop                stopList       `json:"stop"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options"`
	Tools               []chatTool     `json:"tools"`
	// Logprobs asks for the sampled tokens of each choice (non-streamed
	// answers here); the fake's tokens are its own split, with logprob 0.
	Logprobs bool `json:"logprobs"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type chatMessage struct {
	Role    string      `json:"role"`
	Name    string      `json:"name"`
	Content textContent `json:"content"`
}

// textContent accepts every form the APIs accept for message content: a
// string, an array of content parts or blocks, or null (an assistant message
// that only calls tools). Only text parts are kept: "text" (Chat Completions,
// Messages), "input_text" and "output_text" (Responses).
type textContent string

func (c *textContent) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = ""
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = textContent(s)
		return nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		return errors.New("content must be a string or an array of content parts")
	}
	var texts []string
	for _, p := range parts {
		if p.Type == "text" || p.Type == "input_text" || p.Type == "output_text" {
			texts = append(texts, p.Text)
		}
	}
	*c = textContent(strings.Join(texts, "\n"))
	return nil
}

// stopList accepts "stop" as a string, an array of strings or null.
type stopList []string

func (l *stopList) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*l = nil
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*l = stopList{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("stop must be a string or an array of strings")
	}
	*l = list
	return nil
}

var chatRoles = map[string]bool{
	"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true,
}

const maxChoices = 128 // OpenAI's limit for n

// chatParamNames names Params fields as Chat Completions requests do.
func chatParamNames(p string) string {
	if p == "max_tokens" {
		return "max_completion_tokens"
	}
	return p
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	req, c, apiErr := s.readChatRequest(w, r)
	if apiErr != nil {
		apiErr.write(w, chatParamNames)
		return
	}
	comp, apiErr := s.generate(r.Context(), c)
	if apiErr != nil {
		apiErr.write(w, chatParamNames)
		return
	}
	comp.id = "chatcmpl-" + randomString(29, base62)
	for i := range comp.choices {
		for j := range comp.choices[i].toolCalls {
			comp.choices[i].toolCalls[j].ID = "call_" + randomString(24, base62)
		}
	}
	w.Header().Set("openai-processing-ms", strconv.FormatInt(time.Since(start).Milliseconds(), 10))
	if req.Stream {
		includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
		if !includeUsage {
			comp.usage = nil // not sent, so not part of the answer
		}
		s.record("chat.completions", true, start, comp, c.msgs, comp.choices[0].finishReason)
		writeStream(w, comp, includeUsage)
		return
	}
	s.record("chat.completions", false, start, comp, c.msgs, comp.choices[0].finishReason)
	resp := comp.response()
	if req.Logprobs {
		for i := range resp.Choices {
			if c := resp.Choices[i].Message.Content; c != nil {
				resp.Choices[i].Logprobs = sampledTokens(*c)
			}
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

// readChatRequest reads and checks a request the way OpenAI does, with
// OpenAI's error messages. Messages never quote the request's content.
func (s *Server) readChatRequest(w http.ResponseWriter, r *http.Request) (*chatRequest, call, *APIError) {
	body, apiErr := s.readBody(w, r)
	if apiErr != nil {
		return nil, call{}, apiErr
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, call{}, invalidJSON()
	}
	if req.Model == "" {
		return nil, call{}, BadRequest("", "", "you must provide a model parameter")
	}
	model, ok := s.lookupModel(req.Model)
	if !ok {
		return nil, call{}, modelNotFound(req.Model)
	}
	if len(req.Messages) == 0 {
		return nil, call{}, BadRequest("messages", "empty_array", "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	for i, m := range req.Messages {
		if !chatRoles[m.Role] {
			return nil, call{}, BadRequest(fmt.Sprintf("messages[%d].role", i), "invalid_value",
				"Invalid value for 'role'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.")
		}
	}
	for _, check := range []*APIError{
		checkRange("temperature", req.Temperature, 0, 2),
		checkRange("top_p", req.TopP, 0, 1),
		checkIntRange("n", req.N, 1, maxChoices),
		checkIntRange("max_tokens", req.MaxTokens, 1, 1<<31-1),
		checkIntRange("max_completion_tokens", req.MaxCompletionTokens, 1, 1<<31-1),
	} {
		if check != nil {
			return nil, call{}, check
		}
	}
	if req.StreamOptions != nil && !req.Stream {
		return nil, call{}, BadRequest("stream_options", "invalid_value", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}

	c := call{model: model, requested: req.Model, n: 1, tools: fromChatTools(req.Tools), cacheUpTo: -1,
		params: Params{Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.MaxTokens, Seed: req.Seed, Stop: req.Stop}}
	if req.MaxCompletionTokens != nil {
		c.params.MaxTokens = req.MaxCompletionTokens
	}
	if req.N != nil {
		c.n = *req.N
	}
	c.msgs = make([]Message, len(req.Messages))
	for i, m := range req.Messages {
		c.msgs[i] = Message{Role: m.Role, Name: m.Name, Text: string(m.Content)}
	}
	return &req, c, nil
}

func invalidJSON() *APIError {
	return BadRequest("", "", "We could not parse the JSON body of your request. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.")
}

func checkRange(param string, v *float64, lo, hi float64) *APIError {
	switch {
	case v == nil:
		return nil
	case *v < lo:
		return BadRequest(param, "decimal_below_min_value", fmt.Sprintf("Invalid '%s': decimal below minimum value. Expected a value >= %g, but got %g instead.", param, lo, *v))
	case *v > hi:
		return BadRequest(param, "decimal_above_max_value", fmt.Sprintf("Invalid '%s': decimal above maximum value. Expected a value <= %g, but got %g instead.", param, hi, *v))
	}
	return nil
}

func checkIntRange(param string, v *int, lo, hi int) *APIError {
	switch {
	case v == nil:
		return nil
	case *v < lo:
		return BadRequest(param, "integer_below_min_value", fmt.Sprintf("Invalid '%s': integer below minimum value. Expected a value >= %d, but got %d instead.", param, lo, *v))
	case *v > hi:
		return BadRequest(param, "integer_above_max_value", fmt.Sprintf("Invalid '%s': integer above maximum value. Expected a value <= %d, but got %d instead.", param, hi, *v))
	}
	return nil
}

// usage is the Chat Completions usage object.
type usage struct {
	PromptTokens            int                     `json:"prompt_tokens"`
	CompletionTokens        int                     `json:"completion_tokens"`
	TotalTokens             int                     `json:"total_tokens"`
	PromptTokensDetails     promptTokensDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails completionTokensDetails `json:"completion_tokens_details"`
}

type promptTokensDetails struct {
	CachedTokens int `json:"cached_tokens"`
	AudioTokens  int `json:"audio_tokens"`
}

type completionTokensDetails struct {
	ReasoningTokens          int `json:"reasoning_tokens"`
	AudioTokens              int `json:"audio_tokens"`
	AcceptedPredictionTokens int `json:"accepted_prediction_tokens"`
	RejectedPredictionTokens int `json:"rejected_prediction_tokens"`
}

func chatUsage(u *tokenUsage) *usage {
	if u == nil {
		return nil
	}
	return &usage{
		PromptTokens:            u.prompt,
		CompletionTokens:        u.completion,
		TotalTokens:             u.prompt + u.completion,
		PromptTokensDetails:     promptTokensDetails{CachedTokens: u.cached},
		CompletionTokensDetails: completionTokensDetails{ReasoningTokens: u.reasoning},
	}
}

// Wire shapes of responses, field for field as OpenAI sends them.
type (
	chatCompletion struct {
		ID                string       `json:"id"`
		Object            string       `json:"object"`
		Created           int64        `json:"created"`
		Model             string       `json:"model"`
		Choices           []chatChoice `json:"choices"`
		Usage             *usage       `json:"usage,omitempty"`
		ServiceTier       string       `json:"service_tier"`
		SystemFingerprint string       `json:"system_fingerprint"`
	}
	chatChoice struct {
		Index        int              `json:"index"`
		Message      assistantMessage `json:"message"`
		Logprobs     *chatLogprobs    `json:"logprobs"`
		FinishReason string           `json:"finish_reason"`
	}
	chatLogprobs struct {
		Content []tokenLogprob `json:"content"`
		Refusal []tokenLogprob `json:"refusal"`
	}
	tokenLogprob struct {
		Token       string     `json:"token"`
		Logprob     float64    `json:"logprob"`
		Bytes       []int      `json:"bytes"`
		TopLogprobs []struct{} `json:"top_logprobs"`
	}
	assistantMessage struct {
		Role        string         `json:"role"`
		Content     *string        `json:"content"` // null when the model only calls tools
		Refusal     *string        `json:"refusal"`
		Annotations []struct{}     `json:"annotations"`
		ToolCalls   []chatToolCall `json:"tool_calls,omitempty"`
	}
	chatToolCall struct {
		Index    *int   `json:"index,omitempty"` // streamed deltas only
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
	chatCompletionChunk struct {
		ID                string        `json:"id"`
		Object            string        `json:"object"`
		Created           int64         `json:"created"`
		Model             string        `json:"model"`
		ServiceTier       string        `json:"service_tier"`
		SystemFingerprint string        `json:"system_fingerprint"`
		Choices           []chunkChoice `json:"choices"`
		// Usage is null in every chunk when the client asked for usage, and
		// absent when it did not; the last chunk carries the numbers.
		Usage json.RawMessage `json:"usage,omitempty"`
	}
	chunkChoice struct {
		Index        int        `json:"index"`
		Delta        chunkDelta `json:"delta"`
		Logprobs     *struct{}  `json:"logprobs"`
		FinishReason *string    `json:"finish_reason"`
	}
	chunkDelta struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		ToolCalls []chatToolCall `json:"tool_calls,omitempty"`
	}
)

const serviceTier = "default"

func (c *completion) response() chatCompletion {
	resp := chatCompletion{
		ID:                c.id,
		Object:            "chat.completion",
		Created:           c.created,
		Model:             c.snapshot,
		Usage:             chatUsage(c.usage),
		ServiceTier:       serviceTier,
		SystemFingerprint: c.fingerprint,
	}
	for i, ch := range c.choices {
		msg := assistantMessage{Role: "assistant", Annotations: []struct{}{}}
		if len(ch.toolCalls) == 0 {
			msg.Content = &ch.text
		}
		for _, tc := range ch.toolCalls {
			msg.ToolCalls = append(msg.ToolCalls, newChatToolCall(nil, tc))
		}
		resp.Choices = append(resp.Choices, chatChoice{Index: i, Message: msg, FinishReason: ch.finishReason})
	}
	return resp
}

// sampledTokens is a choice's logprobs: its text's tokens, each with its
// bytes as OpenAI sends them.
func sampledTokens(text string) *chatLogprobs {
	out := &chatLogprobs{Content: []tokenLogprob{}}
	for _, tok := range splitTokens(text) {
		b := make([]int, len(tok))
		for i := 0; i < len(tok); i++ {
			b[i] = int(tok[i])
		}
		out.Content = append(out.Content, tokenLogprob{Token: tok, Bytes: b, TopLogprobs: []struct{}{}})
	}
	return out
}

func newChatToolCall(index *int, tc ToolCall) chatToolCall {
	out := chatToolCall{Index: index, ID: tc.ID, Type: "function"}
	out.Function.Name, out.Function.Arguments = tc.Name, tc.Arguments
	return out
}

// writeStream sends c as server-sent events the way OpenAI streams: a role
// chunk, one chunk per token, a finish chunk per choice, then the usage chunk
// if asked for, then "data: [DONE]".
func writeStream(w http.ResponseWriter, c *completion, includeUsage bool) {
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	var usageField json.RawMessage
	if includeUsage {
		usageField = json.RawMessage("null")
	}
	send := func(choices []chunkChoice, usage json.RawMessage) error {
		b, err := json.Marshal(chatCompletionChunk{
			ID: c.id, Object: "chat.completion.chunk", Created: c.created, Model: c.snapshot,
			ServiceTier: serviceTier, SystemFingerprint: c.fingerprint,
			Choices: choices, Usage: usage,
		})
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return err
		}
		return rc.Flush()
	}

	for i, ch := range c.choices {
		empty := ""
		if send([]chunkChoice{{Index: i, Delta: chunkDelta{Role: "assistant", Content: &empty}}}, usageField) != nil {
			return // the client went away
		}
		for _, tok := range splitTokens(ch.text) {
			if send([]chunkChoice{{Index: i, Delta: chunkDelta{Content: &tok}}}, usageField) != nil {
				return
			}
		}
		// A tool call streams as its header (ID, name), then its arguments.
		for j, tc := range ch.toolCalls {
			head := newChatToolCall(&j, tc)
			head.Function.Arguments = ""
			if send([]chunkChoice{{Index: i, Delta: chunkDelta{ToolCalls: []chatToolCall{head}}}}, usageField) != nil {
				return
			}
			for _, tok := range splitTokens(tc.Arguments) {
				part := chatToolCall{Index: &j}
				part.Function.Arguments = tok
				if send([]chunkChoice{{Index: i, Delta: chunkDelta{ToolCalls: []chatToolCall{part}}}}, usageField) != nil {
					return
				}
			}
		}
		if send([]chunkChoice{{Index: i, FinishReason: &ch.finishReason}}, usageField) != nil {
			return
		}
	}
	if includeUsage && c.usage != nil {
		b, err := json.Marshal(chatUsage(c.usage))
		if err != nil || send([]chunkChoice{}, b) != nil {
			return
		}
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
	_ = rc.Flush()
}
