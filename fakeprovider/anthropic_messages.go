package fakeprovider

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
)

// messagesRequest is the part of an Anthropic Messages API request the
// server reads. Fields it does not know are ignored.
type messagesRequest struct {
	Model         string             `json:"model"`
	MaxTokens     *int               `json:"max_tokens"`
	System        textContent        `json:"system"` // a string or an array of text blocks
	Messages      []anthropicMessage `json:"messages"`
	Temperature   *float64           `json:"temperature"`
	TopP          *float64           `json:"top_p"`
	TopK          *int               `json:"top_k"`
	StopSequences []string           `json:"stop_sequences"`
	Stream        bool               `json:"stream"`
}

// anthropicMessage content is a string or an array of content blocks, of
// which only text blocks count — the same forms textContent reads.
type anthropicMessage struct {
	Role    string      `json:"role"`
	Content textContent `json:"content"`
}

// messagesParamNames names Params fields as Messages API requests do.
func messagesParamNames(p string) string {
	if p == "stop" {
		return "stop_sequences"
	}
	return p
}

func (s *Server) messages(w http.ResponseWriter, r *http.Request) {
	requestID := "req_011C" + randomString(20, base62)
	w.Header().Set("request-id", requestID)
	fail := func(e *APIError) { e.writeAnthropic(w, requestID, messagesParamNames) }
	if apiErr := s.checkAnthropicHeaders(r); apiErr != nil {
		fail(apiErr)
		return
	}
	req, c, apiErr := s.readMessagesRequest(w, r)
	if apiErr != nil {
		fail(apiErr)
		return
	}
	comp, apiErr := s.generate(r.Context(), c)
	if apiErr != nil {
		fail(apiErr)
		return
	}
	comp.id = "msg_01" + randomString(22, base62)
	msg := newAnthropicMessage(comp)
	if req.Stream {
		writeMessageStream(w, msg)
		return
	}
	writeJSON(w, http.StatusOK, msg)
}

// checkAnthropicHeaders checks the API key (x-api-key) and the required
// anthropic-version header, with Anthropic's messages.
func (s *Server) checkAnthropicHeaders(r *http.Request) *APIError {
	if s.apiKey != "" {
		got := r.Header.Get("x-api-key")
		if got == "" {
			return &APIError{Status: http.StatusUnauthorized, Message: "x-api-key header is required"}
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.apiKey)) != 1 {
			return &APIError{Status: http.StatusUnauthorized, Message: "invalid x-api-key"}
		}
	}
	if r.Header.Get("anthropic-version") == "" {
		return anthropicInvalid("anthropic-version: header is required")
	}
	return nil
}

func anthropicInvalid(message string) *APIError {
	return &APIError{Status: http.StatusBadRequest, Type: "invalid_request_error", Message: message}
}

// readMessagesRequest reads and checks a request the way the Messages API
// does, with its messages. Messages never quote the request's content.
func (s *Server) readMessagesRequest(w http.ResponseWriter, r *http.Request) (*messagesRequest, call, *APIError) {
	body, apiErr := s.readBody(w, r)
	if apiErr != nil {
		return nil, call{}, apiErr
	}
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, call{}, anthropicInvalid("There was an issue with the request body: it is not valid JSON or a field has the wrong type.")
	}
	switch {
	case req.Model == "":
		return nil, call{}, anthropicInvalid("model: Field required")
	case req.MaxTokens == nil:
		return nil, call{}, anthropicInvalid("max_tokens: Field required")
	case *req.MaxTokens < 1:
		return nil, call{}, anthropicInvalid("max_tokens: Input should be greater than or equal to 1")
	case len(req.Messages) == 0:
		return nil, call{}, anthropicInvalid("messages: at least one message is required")
	case req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 1):
		return nil, call{}, anthropicInvalid("temperature: range: 0..1")
	case req.TopP != nil && (*req.TopP < 0 || *req.TopP > 1):
		return nil, call{}, anthropicInvalid("top_p: range: 0..1")
	case req.TopK != nil && *req.TopK < 0:
		return nil, call{}, anthropicInvalid("top_k: Input should be greater than or equal to 0")
	}
	model, ok := s.lookupModel(req.Model)
	if !ok {
		return nil, call{}, &APIError{Status: http.StatusNotFound, Message: "model: " + req.Model}
	}
	var msgs []Message
	if req.System != "" {
		msgs = append(msgs, Message{Role: "system", Text: string(req.System)})
	}
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, call{}, anthropicInvalid(fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i))
		}
		msgs = append(msgs, Message{Role: m.Role, Text: string(m.Content)})
	}
	return &req, call{model: model, requested: req.Model, msgs: msgs, n: 1, params: Params{
		Temperature: req.Temperature, TopP: req.TopP, TopK: req.TopK, MaxTokens: req.MaxTokens, Stop: req.StopSequences,
	}}, nil
}

// Wire shapes of the Messages API, field for field as Anthropic sends them.
type (
	anthropicResponse struct {
		ID           string          `json:"id"`
		Type         string          `json:"type"`
		Role         string          `json:"role"`
		Model        string          `json:"model"`
		Content      []textBlock     `json:"content"`
		StopReason   *string         `json:"stop_reason"`
		StopSequence *string         `json:"stop_sequence"`
		Usage        *anthropicUsage `json:"usage,omitempty"`
	}
	textBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	// anthropicUsage: input_tokens excludes the tokens read from or written
	// to the cache, unlike OpenAI's prompt_tokens.
	anthropicUsage struct {
		InputTokens              int    `json:"input_tokens"`
		CacheCreationInputTokens int    `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int    `json:"cache_read_input_tokens"`
		OutputTokens             int    `json:"output_tokens"`
		ServiceTier              string `json:"service_tier"`
	}
)

func newAnthropicMessage(c *completion) anthropicResponse {
	ch := c.choices[0]
	reason := "end_turn"
	var stopSeq *string
	switch {
	case ch.finishReason == "length":
		reason = "max_tokens"
	case ch.stopSequence != "":
		reason, stopSeq = "stop_sequence", &ch.stopSequence
	}
	msg := anthropicResponse{
		ID: c.id, Type: "message", Role: "assistant", Model: c.snapshot,
		Content:    []textBlock{{Type: "text", Text: ch.text}},
		StopReason: &reason, StopSequence: stopSeq,
	}
	if u := c.usage; u != nil {
		msg.Usage = &anthropicUsage{InputTokens: u.prompt - u.cached, CacheReadInputTokens: u.cached, OutputTokens: u.completion, ServiceTier: "standard"}
	}
	return msg
}

// writeMessageStream sends msg as the Messages API streams: message_start
// (usage so far), one text content block with a delta per token, a ping,
// message_delta with the stop reason and output tokens, message_stop.
func writeMessageStream(w http.ResponseWriter, msg anthropicResponse) {
	es := startEventStream(w)
	start := msg
	start.Content, start.StopReason, start.StopSequence = []textBlock{}, nil, nil
	if msg.Usage != nil {
		u := *msg.Usage
		u.OutputTokens = 1 // Anthropic reports a placeholder until message_delta
		start.Usage = &u
	}
	type m = map[string]any
	send := func(name string, data m) bool { return es.send(name, data) == nil } // false: the client went away
	if !send("message_start", m{"type": "message_start", "message": start}) ||
		!send("content_block_start", m{"type": "content_block_start", "index": 0, "content_block": textBlock{Type: "text"}}) ||
		!send("ping", m{"type": "ping"}) {
		return
	}
	for _, tok := range splitTokens(msg.Content[0].Text) {
		if !send("content_block_delta", m{"type": "content_block_delta", "index": 0, "delta": m{"type": "text_delta", "text": tok}}) {
			return
		}
	}
	delta := m{"type": "message_delta", "delta": m{"stop_reason": msg.StopReason, "stop_sequence": msg.StopSequence}}
	if msg.Usage != nil {
		delta["usage"] = m{"output_tokens": msg.Usage.OutputTokens}
	}
	if send("content_block_stop", m{"type": "content_block_stop", "index": 0}) && send("message_delta", delta) {
		send("message_stop", m{"type": "message_stop"})
	}
}
