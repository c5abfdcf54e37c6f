package fakeprovider

import "time"

// Answer is what the server told a client about one request it answered:
// the truth an observability pipeline's record of the call is checked
// against. Config.Record receives one per successful answer.
type Answer struct {
	API            string // "chat.completions", "responses", "messages" or "embeddings"
	RequestedModel string
	Model          string // the snapshot named in the response
	ResponseID     string // empty for embeddings, which have none
	Stream         bool
	// FinishReason as the wire said it: Chat Completions finish_reason,
	// Responses status, Messages stop_reason; empty for embeddings.
	FinishReason string
	Usage        *AnswerUsage // nil when the response carried no usage
	Prompt       []Message    // the input as the server read it (embeddings: one user message per input)
	Text         string       // the first choice's text
	ToolCalls    []ToolCall
	Received     time.Time
}

// AnswerUsage counts a response's tokens the way the GenAI semantic
// conventions do, whatever the wire said: Input includes the tokens read
// from and written to the prompt cache (Anthropic's input_tokens does not),
// Output includes Reasoning.
type AnswerUsage struct {
	Input, Output, CacheRead, CacheWrite, Reasoning int
}

// record hands an answer to Config.Record, if set.
func (s *Server) record(api string, stream bool, received time.Time, c *completion, prompt []Message, finish string) {
	if s.recordFn == nil {
		return
	}
	a := Answer{API: api, Model: c.snapshot, RequestedModel: c.requested, ResponseID: c.id, Stream: stream,
		FinishReason: finish, Prompt: prompt, Received: received}
	if len(c.choices) > 0 {
		a.Text, a.ToolCalls = c.choices[0].text, c.choices[0].toolCalls
	}
	if u := c.usage; u != nil {
		a.Usage = &AnswerUsage{Input: u.prompt, Output: u.completion, CacheRead: u.cached, CacheWrite: u.cacheWrite, Reasoning: u.reasoning}
	}
	s.recordFn(a)
}
