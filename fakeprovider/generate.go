package fakeprovider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// call is one request as every wire API reduces it: the snapshot that
// answers, the input, the sampling parameters and the number of choices.
type call struct {
	model     Model
	requested string
	msgs      []Message
	params    Params
	n         int
	tools     []Tool
	// cacheUpTo is the last message of an explicitly cached prefix
	// (Anthropic's cache_control), or -1: then caching is automatic.
	cacheUpTo int
}

// completion is one answered request, before a wire API writes it.
type completion struct {
	id          string
	requested   string
	created     int64
	snapshot    string
	fingerprint string
	choices     []choice
	usage       *tokenUsage // nil when this response omits usage
}

type choice struct {
	text         string
	finishReason string // "stop" or "length"
	stopSequence string // the stop sequence that ended the text, if one did
	toolCalls    []ToolCall
}

// tokenUsage counts tokens the way every API does before naming them.
type tokenUsage struct {
	prompt     int // all input tokens, cached ones included
	cached     int // of prompt, read from the prompt cache
	cacheWrite int // of prompt, written to the prompt cache (Anthropic)
	completion int // all output tokens, reasoning ones included
	reasoning  int // of completion, hidden reasoning
}

// generate asks the Responder for every choice of c and does the
// accounting: limits, tokens, prompt cache, usage omission.
func (s *Server) generate(ctx context.Context, c call) (*completion, *APIError) {
	out := &completion{
		requested:   c.requested,
		created:     s.now().Unix(),
		snapshot:    c.model.Snapshot,
		fingerprint: fingerprint(c.model.Snapshot),
	}
	u := tokenUsage{prompt: promptTokens(c.msgs)}
	for i := range c.n {
		reply, err := s.responder(ctx, &Request{Model: c.model, RequestedModel: c.requested, Messages: c.msgs, Params: c.params, Tools: c.tools, Choice: i})
		if err != nil {
			if apiErr, ok := errors.AsType[*APIError](err); ok {
				return nil, apiErr
			}
			return nil, ServerError()
		}
		ch, reasoning := applyLimits(reply, c.params)
		out.choices = append(out.choices, ch)
		u.completion += countTokens(ch.text) + reasoning
		u.reasoning += reasoning
		for _, tc := range ch.toolCalls {
			u.completion += countTokens(tc.Name) + countTokens(tc.Arguments)
		}
	}
	if c.cacheUpTo >= 0 {
		u.cached, u.cacheWrite = s.cache.explicit(c.model.Snapshot, c.msgs[:c.cacheUpTo+1])
	} else {
		u.cached = s.cache.cachedTokens(c.model.Snapshot, c.msgs)
	}
	if !s.missingUsage.next() {
		out.usage = &u
	}
	return out, nil
}

// applyLimits cuts a reply at the first stop sequence and at the token
// limit, which reasoning tokens count against, as the real APIs do.
func applyLimits(reply Reply, p Params) (ch choice, reasoning int) {
	ch = choice{text: reply.Text, finishReason: reply.FinishReason, toolCalls: reply.ToolCalls}
	if len(ch.toolCalls) > 0 && ch.finishReason == "" {
		ch.finishReason = "tool_calls"
	}
	reasoning = reply.ReasoningTokens
	if ch.finishReason == "" {
		ch.finishReason = "stop"
	}
	for _, stop := range p.Stop {
		if i := strings.Index(ch.text, stop); stop != "" && i >= 0 {
			ch.text, ch.finishReason, ch.stopSequence = ch.text[:i], "stop", stop
		}
	}
	if p.MaxTokens != nil {
		reasoning = min(reasoning, *p.MaxTokens)
		if budget := *p.MaxTokens - reasoning; countTokens(ch.text) > budget {
			ch.text, ch.finishReason, ch.stopSequence = truncateTokens(ch.text, budget), "length", ""
		}
	}
	return ch, reasoning
}

// fingerprint stands for OpenAI's system_fingerprint, the backend
// configuration: stable per snapshot here.
func fingerprint(snapshot string) string {
	sum := sha256.Sum256([]byte(snapshot))
	return "fp_" + hex.EncodeToString(sum[:5])
}

// readBody reads a request body up to the server's limit.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *APIError) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err != nil {
		if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
			return nil, &APIError{
				Status:  http.StatusRequestEntityTooLarge,
				Type:    "invalid_request_error",
				Message: fmt.Sprintf("Request body too large: the limit is %d bytes.", s.maxBody),
			}
		}
		return nil, BadRequest("", "", "Could not read the request body.")
	}
	return body, nil
}

// lookupModel resolves a requested name to the snapshot that answers it.
func (s *Server) lookupModel(name string) (Model, bool) {
	m, ok := s.models[name]
	return m, ok
}
