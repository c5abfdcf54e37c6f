package providers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/docketlabs/docket/replay/genai"
)

// chatWire is OpenAI Chat Completions (POST /chat/completions).
type chatWire struct{ legacyMaxTokens bool }

func (chatWire) path() string { return "/chat/completions" }

func (chatWire) setHeaders(h http.Header, apiKey string) {
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
}

func (chatWire) params(p Params) (Params, []ParamChange) {
	return unsupported(Params.without, p, ChatCompletions, ParamTopK)
}

func (chatWire) required(string) bool { return false }

func (w chatWire) wireName(name string) string {
	switch name {
	case ParamMaxTokens:
		if w.legacyMaxTokens {
			return "max_tokens"
		}
		return "max_completion_tokens"
	case ParamStopSequences:
		return "stop"
	}
	return name
}

// unsupported removes parameters the API has no field for and reports them.
func unsupported(without func(Params, string) Params, p Params, api API, names ...string) (Params, []ParamChange) {
	var changes []ParamChange
	for _, n := range names {
		if p.has(n) {
			changes = append(changes, ParamChange{Param: n, Action: ChangeNotSupported, Recorded: p.describe(n),
				Reason: fmt.Sprintf("%s has no such parameter", api)})
			p = without(p, n)
		}
	}
	return p, changes
}

type (
	chatRequest struct {
		Model               string         `json:"model"`
		Messages            []chatMessage  `json:"messages"`
		Tools               []chatTool     `json:"tools,omitempty"`
		Temperature         *float64       `json:"temperature,omitempty"`
		TopP                *float64       `json:"top_p,omitempty"`
		MaxTokens           *int64         `json:"max_tokens,omitempty"`
		MaxCompletionTokens *int64         `json:"max_completion_tokens,omitempty"`
		Seed                *int64         `json:"seed,omitempty"`
		Stop                []string       `json:"stop,omitempty"`
		Stream              bool           `json:"stream,omitempty"`
		StreamOptions       *streamOptions `json:"stream_options,omitempty"`
		Logprobs            bool           `json:"logprobs,omitempty"`
	}
	streamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	}
	chatMessage struct {
		Role       string         `json:"role"`
		Name       string         `json:"name,omitempty"`
		Content    any            `json:"content"` // string, []chatPart, or nil
		ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
		ToolCallID string         `json:"tool_call_id,omitempty"`
	}
	chatPart struct {
		Type     string        `json:"type"`
		Text     string        `json:"text,omitempty"`
		ImageURL *chatImageURL `json:"image_url,omitempty"`
	}
	chatImageURL struct {
		URL string `json:"url"`
	}
	chatToolCall struct {
		Index    *int         `json:"index,omitempty"` // stream deltas only
		ID       string       `json:"id,omitempty"`
		Type     string       `json:"type,omitempty"`
		Function chatFunction `json:"function"`
	}
	chatFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	chatTool struct {
		Type     string           `json:"type"`
		Function chatToolFunction `json:"function"`
	}
	chatToolFunction struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
)

func (w chatWire) encode(req Request, p Params, stream bool) ([]byte, error) {
	body := chatRequest{Model: req.Model, Temperature: p.Temperature, TopP: p.TopP, Seed: p.Seed, Stop: p.StopSequences}
	if w.legacyMaxTokens {
		body.MaxTokens = p.MaxTokens
	} else {
		body.MaxCompletionTokens = p.MaxTokens
	}
	if stream {
		body.Stream, body.StreamOptions = true, &streamOptions{IncludeUsage: true}
	} else {
		body.Logprobs = req.Logprobs
	}
	if len(req.System) > 0 {
		text, err := systemText(ChatCompletions, req.System)
		if err != nil {
			return nil, err
		}
		body.Messages = append(body.Messages, chatMessage{Role: genai.RoleSystem, Content: text})
	}
	for _, m := range req.Messages {
		msgs, err := chatMessages(m)
		if err != nil {
			return nil, err
		}
		body.Messages = append(body.Messages, msgs...)
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: chatToolFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	return marshal(body)
}

// chatMessages converts one GenAI message; a tool message with several
// responses becomes one Chat message per response.
func chatMessages(m genai.Message) ([]chatMessage, error) {
	if m.Role == genai.RoleTool {
		var out []chatMessage
		for _, p := range m.Parts {
			if p.Type != genai.PartToolCallResponse {
				return nil, &UnsupportedError{API: ChatCompletions, What: label(p.Type) + " part in a tool message"}
			}
			out = append(out, chatMessage{Role: "tool", ToolCallID: p.ID, Content: responseText(p.Response)})
		}
		return out, nil
	}
	msg := chatMessage{Role: m.Role, Name: m.Name}
	var parts []chatPart
	plain := true // only text: sent as one string, as most clients do
	for _, p := range m.Parts {
		switch {
		case p.Type == genai.PartText:
			parts = append(parts, chatPart{Type: "text", Text: p.Content})
		case p.Type == genai.PartToolCall && m.Role == genai.RoleAssistant:
			msg.ToolCalls = append(msg.ToolCalls, chatToolCall{ID: p.ID, Type: "function", Function: chatFunction{Name: p.Name, Arguments: argumentsString(p.Arguments)}})
		default:
			url, mediaType, data, ok := imageSource(p)
			if !ok || m.Role != genai.RoleUser {
				return nil, &UnsupportedError{API: ChatCompletions, What: label(p.Type) + " part in a " + label(m.Role) + " message"}
			}
			if url == "" {
				url = "data:" + mediaType + ";base64," + data
			}
			parts = append(parts, chatPart{Type: "image_url", ImageURL: &chatImageURL{URL: url}})
			plain = false
		}
	}
	switch {
	case len(parts) == 0 && len(msg.ToolCalls) > 0:
		msg.Content = nil
	case plain:
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		msg.Content = b.String()
	default:
		msg.Content = parts
	}
	return []chatMessage{msg}, nil
}

type (
	chatResponse struct {
		ID      string           `json:"id"`
		Model   string           `json:"model"`
		Choices []chatChoice     `json:"choices"`
		Usage   *chatUsage       `json:"usage"`
		Error   *json.RawMessage `json:"error"` // an error inside a stream
	}
	chatChoice struct {
		Message      chatAnswer    `json:"message"`
		Delta        chatAnswer    `json:"delta"`
		FinishReason *string       `json:"finish_reason"`
		Logprobs     *chatLogprobs `json:"logprobs"`
	}
	chatLogprobs struct {
		Content []struct {
			Token string `json:"token"`
			// Bytes are the token's bytes: a token may hold part of a
			// character, which Token cannot show.
			Bytes []int `json:"bytes"`
		} `json:"content"`
	}
	chatAnswer struct {
		Content   *string        `json:"content"`
		Refusal   *string        `json:"refusal"`
		ToolCalls []chatToolCall `json:"tool_calls"`
	}
	chatUsage struct {
		PromptTokens        *int64 `json:"prompt_tokens"`
		CompletionTokens    *int64 `json:"completion_tokens"`
		PromptTokensDetails *struct {
			CachedTokens *int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
		CompletionTokensDetails *struct {
			ReasoningTokens *int64 `json:"reasoning_tokens"`
		} `json:"completion_tokens_details"`
	}
)

func (u *chatUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	out := Usage{Input: u.PromptTokens, Output: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CacheRead = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.Reasoning = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

func (chatWire) decode(body []byte) (Result, error) {
	var r chatResponse
	if err := json.Unmarshal(body, &r); err != nil || len(r.Choices) == 0 {
		return Result{}, fmt.Errorf("%w: %s: no choices", ErrBadResponse, ChatCompletions)
	}
	ch := r.Choices[0]
	res := Result{ResponseModel: r.Model, ResponseID: r.ID, Usage: r.Usage.usage()}
	if ch.FinishReason != nil {
		res.FinishReason = *ch.FinishReason
	}
	res.Output = chatOutput(ch.Message, ch.Message.ToolCalls, res.FinishReason)
	res.Tokens = ch.Logprobs.tokens()
	return res, nil
}

// tokens are the sampled tokens' bytes; nil when none were sent or one is
// not bytes.
func (l *chatLogprobs) tokens() []string {
	if l == nil || len(l.Content) == 0 {
		return nil
	}
	out := make([]string, 0, len(l.Content))
	for _, t := range l.Content {
		if t.Bytes == nil {
			out = append(out, t.Token)
			continue
		}
		b := make([]byte, len(t.Bytes))
		for i, v := range t.Bytes {
			if v < 0 || v > 255 {
				return nil
			}
			b[i] = byte(v)
		}
		out = append(out, string(b))
	}
	return out
}

// chatOutput builds the GenAI output message of an answer.
func chatOutput(a chatAnswer, calls []chatToolCall, finish string) genai.Message {
	out := genai.Message{Role: genai.RoleAssistant, Parts: []genai.Part{}, FinishReason: finishReason(finish)}
	if a.Content != nil && *a.Content != "" {
		out.Parts = append(out.Parts, genai.Part{Type: genai.PartText, Content: *a.Content})
	}
	if a.Refusal != nil && *a.Refusal != "" {
		out.Parts = append(out.Parts, genai.Part{Type: genai.PartText, Content: *a.Refusal})
	}
	for _, c := range calls {
		out.Parts = append(out.Parts, genai.Part{Type: genai.PartToolCall, ID: c.ID, Name: c.Function.Name, Arguments: parsedArguments(c.Function.Arguments)})
	}
	return out
}

func (chatWire) decodeStream(ev *eventReader, started time.Time) (Result, error) {
	var res Result
	var text, refusal strings.Builder
	var calls []chatToolCall
	for {
		e, err := ev.next()
		if err != nil {
			return Result{}, err
		}
		if e.data == "[DONE]" {
			break
		}
		var chunk chatResponse
		if err := json.Unmarshal([]byte(e.data), &chunk); err != nil {
			return Result{}, fmt.Errorf("%w: %s: a chunk is not JSON", ErrBadResponse, ChatCompletions)
		}
		if chunk.Error != nil {
			return Result{}, streamError(*chunk.Error)
		}
		if chunk.ID != "" {
			res.ResponseID = chunk.ID
		}
		if chunk.Model != "" {
			res.ResponseModel = chunk.Model
		}
		if chunk.Usage != nil {
			res.Usage = chunk.Usage.usage()
		}
		for _, ch := range chunk.Choices {
			d := ch.Delta
			if (d.Content != nil && *d.Content != "") || len(d.ToolCalls) > 0 {
				markFirstContent(&res, started)
			}
			if d.Content != nil {
				text.WriteString(*d.Content)
			}
			if d.Refusal != nil {
				refusal.WriteString(*d.Refusal)
			}
			calls = mergeToolCallDeltas(calls, d.ToolCalls)
			if ch.FinishReason != nil {
				res.FinishReason = *ch.FinishReason
			}
		}
	}
	content, ref := text.String(), refusal.String()
	res.Output = chatOutput(chatAnswer{Content: &content, Refusal: &ref}, calls, res.FinishReason)
	return res, nil
}

// mergeToolCallDeltas adds streamed tool-call fragments: the first fragment
// of a call carries its index, ID and name, later ones more arguments.
func mergeToolCallDeltas(calls []chatToolCall, deltas []chatToolCall) []chatToolCall {
	for _, d := range deltas {
		i := len(calls)
		if d.Index != nil {
			i = *d.Index
		}
		if i < 0 || i > len(calls) || i > math.MaxInt16 {
			continue // out of order or absurd: ignore rather than grow without bound
		}
		if i == len(calls) {
			calls = append(calls, chatToolCall{})
		}
		c := &calls[i]
		if d.ID != "" {
			c.ID = d.ID
		}
		if d.Function.Name != "" {
			c.Function.Name = d.Function.Name
		}
		c.Function.Arguments += d.Function.Arguments
	}
	return calls
}

func markFirstContent(res *Result, started time.Time) {
	if res.TTFT == nil {
		d := time.Since(started)
		res.TTFT = &d
	}
}

// streamError turns an error object inside a stream into an APIError.
func streamError(raw json.RawMessage) error {
	var e struct {
		Type  string          `json:"type"`
		Code  json.RawMessage `json:"code"`
		Param *string         `json:"param"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return errors.Join(ErrBadResponse, errors.New("unreadable error event"))
	}
	apiErr := &APIError{Type: e.Type, Code: responseText(e.Code), Status: streamErrorStatus(e.Type)}
	if e.Param != nil {
		apiErr.Param = *e.Param
	}
	return apiErr
}

func (w chatWire) decodeError(body []byte, sent Params) *APIError { return openAIError(w, body, sent) }

// openAIError reads an error answer of either OpenAI API.
func openAIError(w wire, body []byte, sent Params) *APIError {
	typ, code, param, message, requestID := errorBody(body)
	return &APIError{Type: typ, Code: code, Param: param, RequestID: requestID, mentioned: mentions(message, sentWireNames(w, sent))}
}

// sentWireNames lists the wire names of the parameters a request sent.
func sentWireNames(w wire, sent Params) []string {
	var out []string
	for _, n := range paramNames {
		if sent.has(n) {
			out = append(out, w.wireName(n))
		}
	}
	return out
}
