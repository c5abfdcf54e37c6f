package fakeprovider

import (
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
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
	Tools         []flatTool         `json:"tools"`
}

// cacheMarks reads only where a request puts cache_control, to find the
// end of the prefix the client asked to cache.
type cacheMarks struct {
	System   blocksMarked `json:"system"`
	Messages []struct {
		Content blocksMarked `json:"content"`
	} `json:"messages"`
}

// blocksMarked is true when content given as blocks has a cache_control.
type blocksMarked bool

func (b *blocksMarked) UnmarshalJSON(data []byte) error {
	var blocks []struct {
		CacheControl json.RawMessage `json:"cache_control"`
	}
	if json.Unmarshal(data, &blocks) != nil {
		return nil // a string: no cache_control possible
	}
	for _, bl := range blocks {
		if len(bl.CacheControl) > 0 && string(bl.CacheControl) != "null" {
			*b = true
		}
	}
	return nil
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
	received := time.Now()
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
	for j := range comp.choices[0].toolCalls {
		comp.choices[0].toolCalls[j].ID = "toolu_01" + randomString(22, base62)
	}
	msg := newAnthropicMessage(comp)
	s.record("messages", req.Stream, received, comp, c.msgs, *msg.StopReason)
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
	var marks cacheMarks
	_ = json.Unmarshal(body, &marks) // the body parsed above; a mark it cannot read is no mark
	cacheUpTo := -1
	var msgs []Message
	if req.System != "" {
		msgs = append(msgs, Message{Role: "system", Text: string(req.System)})
		if marks.System {
			cacheUpTo = 0
		}
	}
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return nil, call{}, anthropicInvalid(fmt.Sprintf("messages.%d.role: Input should be 'user' or 'assistant'", i))
		}
		msgs = append(msgs, Message{Role: m.Role, Text: string(m.Content)})
		if i < len(marks.Messages) && bool(marks.Messages[i].Content) {
			cacheUpTo = len(msgs) - 1
		}
	}
	return &req, call{model: model, requested: req.Model, msgs: msgs, n: 1, tools: fromFlatTools(req.Tools), cacheUpTo: cacheUpTo, params: Params{
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
		Content      []any           `json:"content"` // textBlock or toolUseBlock
		StopReason   *string         `json:"stop_reason"`
		StopSequence *string         `json:"stop_sequence"`
		Usage        *anthropicUsage `json:"usage,omitempty"`
	}
	textBlock struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	toolUseBlock struct {
		Type  string          `json:"type"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
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
	case len(ch.toolCalls) > 0:
		reason = "tool_use"
	case ch.stopSequence != "":
		reason, stopSeq = "stop_sequence", &ch.stopSequence
	}
	msg := anthropicResponse{
		ID: c.id, Type: "message", Role: "assistant", Model: c.snapshot,
		StopReason: &reason, StopSequence: stopSeq,
	}
	if ch.text != "" || len(ch.toolCalls) == 0 {
		msg.Content = append(msg.Content, textBlock{Type: "text", Text: ch.text})
	}
	for _, tc := range ch.toolCalls {
		msg.Content = append(msg.Content, toolUseBlock{Type: "tool_use", ID: tc.ID, Name: tc.Name, Input: json.RawMessage(tc.Arguments)})
	}
	if u := c.usage; u != nil {
		msg.Usage = &anthropicUsage{InputTokens: u.prompt - u.cached - u.cacheWrite, CacheReadInputTokens: u.cached,
			CacheCreationInputTokens: u.cacheWrite, OutputTokens: u.completion, ServiceTier: "standard"}
	}
	return msg
}

// writeMessageStream sends msg as the Messages API streams: message_start
// (usage so far), one text content block with a delta per token, a ping,
// message_delta with the stop reason and output tokens, message_stop.
func writeMessageStream(w http.ResponseWriter, msg anthropicResponse) {
	es := startEventStream(w)
	start := msg
	start.Content, start.StopReason, start.StopSequence = []any{}, nil, nil
	if msg.Usage != nil {
		u := *msg.Usage
		u.OutputTokens = 1 // Anthropic reports a placeholder until message_delta
		start.Usage = &u
	}
	type m = map[string]any
	send := func(name string, data m) bool { return es.send(name, data) == nil } // false: the client went away
	if !send("message_start", m{"type": "message_start", "message": start}) {
		return
	}
	// Anthropic pings once, after the first block starts.
	startBlock := func(i int, block any) bool {
		return send("content_block_start", m{"type": "content_block_start", "index": i, "content_block": block}) &&
			(i > 0 || send("ping", m{"type": "ping"}))
	}
	for i, block := range msg.Content {
		var ok bool
		switch b := block.(type) {
		case textBlock:
			ok = startBlock(i, textBlock{Type: "text"})
			for _, tok := range splitTokens(b.Text) {
				ok = ok && send("content_block_delta", m{"type": "content_block_delta", "index": i, "delta": m{"type": "text_delta", "text": tok}})
			}
		case toolUseBlock:
			head := b
			head.Input = json.RawMessage("{}")
			ok = startBlock(i, head)
			for _, tok := range splitTokens(string(b.Input)) {
				ok = ok && send("content_block_delta", m{"type": "content_block_delta", "index": i, "delta": m{"type": "input_json_delta", "partial_json": tok}})
			}
		}
		if !ok || !send("content_block_stop", m{"type": "content_block_stop", "index": i}) {
			return
		}
	}
	delta := m{"type": "message_delta", "delta": m{"stop_reason": msg.StopReason, "stop_sequence": msg.StopSequence}}
	if msg.Usage != nil {
		delta["usage"] = m{"output_tokens": msg.Usage.OutputTokens}
	}
	if send("message_delta", delta) {
		send("message_stop", m{"type": "message_stop"})
	}
}
