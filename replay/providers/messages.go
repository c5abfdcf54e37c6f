package providers

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/docketlabs/docket/replay/genai"
)

// messagesWire is the Anthropic Messages API (POST /v1/messages).
type messagesWire struct {
	defaultMaxTokens int64
	version          string
}

func (messagesWire) path() string { return "/v1/messages" }

func (w messagesWire) setHeaders(h http.Header, apiKey string) {
	if apiKey != "" {
		h.Set("x-api-key", apiKey)
	}
	h.Set("anthropic-version", w.version)
}

func (w messagesWire) params(p Params) (Params, []ParamChange) {
	p, changes := unsupported(Params.without, p, Messages, ParamSeed)
	if p.MaxTokens == nil {
		p.MaxTokens = new(w.defaultMaxTokens)
		changes = append(changes, ParamChange{Param: ParamMaxTokens, Action: ChangeDefaulted, Sent: strconv.FormatInt(w.defaultMaxTokens, 10),
			Reason: "the Messages API requires max_tokens and the call recorded none"})
	}
	if p.TopK != nil && *p.TopK != math.Trunc(*p.TopK) {
		k := math.Round(*p.TopK)
		changes = append(changes, ParamChange{Param: ParamTopK, Action: ChangeAdjusted, Recorded: p.describe(ParamTopK), Sent: fmt.Sprint(k),
			Reason: "the Messages API takes top_k as an integer"})
		p.TopK = &k
	}
	return p, changes
}

func (messagesWire) required(name string) bool { return name == ParamMaxTokens }

func (messagesWire) wireName(name string) string { return name }

type (
	messagesRequest struct {
		Model         string          `json:"model"`
		MaxTokens     int64           `json:"max_tokens"`
		System        string          `json:"system,omitempty"`
		Messages      []anthropicMsg  `json:"messages"`
		Tools         []anthropicTool `json:"tools,omitempty"`
		Temperature   *float64        `json:"temperature,omitempty"`
		TopP          *float64        `json:"top_p,omitempty"`
		TopK          *int64          `json:"top_k,omitempty"`
		StopSequences []string        `json:"stop_sequences,omitempty"`
		Stream        bool            `json:"stream,omitempty"`
	}
	anthropicMsg struct {
		Role    string           `json:"role"`
		Content []anthropicBlock `json:"content"`
	}
	anthropicBlock struct {
		Type      string           `json:"type"`
		Text      *string          `json:"text,omitempty"`
		ID        string           `json:"id,omitempty"`
		Name      string           `json:"name,omitempty"`
		Input     json.RawMessage  `json:"input,omitempty"`
		ToolUseID string           `json:"tool_use_id,omitempty"`
		Content   *string          `json:"content,omitempty"`
		Source    *anthropicSource `json:"source,omitempty"`
	}
	anthropicSource struct {
		Type      string `json:"type"`
		URL       string `json:"url,omitempty"`
		MediaType string `json:"media_type,omitempty"`
		Data      string `json:"data,omitempty"`
	}
	anthropicTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
)

func (messagesWire) encode(req Request, p Params, stream bool) ([]byte, error) {
	body := messagesRequest{Model: req.Model, MaxTokens: *p.MaxTokens, Messages: []anthropicMsg{},
		Temperature: p.Temperature, TopP: p.TopP, StopSequences: p.StopSequences, Stream: stream}
	if p.TopK != nil {
		k := int64(*p.TopK)
		body.TopK = &k
	}
	system, err := systemText(Messages, req.System)
	if err != nil {
		return nil, err
	}
	var systems []string
	if system != "" {
		systems = append(systems, system)
	}
	for i, m := range req.Messages {
		if m.Role == genai.RoleSystem {
			// The API takes system text only up front; leading system
			// messages join the system prompt.
			if len(body.Messages) > 0 {
				return nil, &UnsupportedError{API: Messages, What: "a system message after the conversation started"}
			}
			text, err := systemText(Messages, m.Parts)
			if err != nil {
				return nil, err
			}
			systems = append(systems, text)
			continue
		}
		msg, err := anthropicMessage(m)
		if err != nil {
			return nil, fmt.Errorf("message %d: %w", i, err)
		}
		body.Messages = append(body.Messages, msg)
	}
	body.System = strings.Join(systems, "\n")
	for _, t := range req.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		body.Tools = append(body.Tools, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return marshal(body)
}

func anthropicMessage(m genai.Message) (anthropicMsg, error) {
	role := m.Role
	switch role {
	case genai.RoleUser, genai.RoleAssistant:
	case genai.RoleTool:
		role = genai.RoleUser // tool results travel in a user turn
	default:
		return anthropicMsg{}, &UnsupportedError{API: Messages, What: "the role " + label(m.Role)}
	}
	msg := anthropicMsg{Role: role, Content: []anthropicBlock{}}
	for _, p := range m.Parts {
		switch {
		case p.Type == genai.PartText && m.Role != genai.RoleTool:
			text := p.Content
			msg.Content = append(msg.Content, anthropicBlock{Type: "text", Text: &text})
		case p.Type == genai.PartToolCall && m.Role == genai.RoleAssistant:
			input, ok := argumentsObject(p.Arguments)
			if !ok {
				return anthropicMsg{}, &UnsupportedError{API: Messages, What: "tool-call arguments that are not a JSON object"}
			}
			msg.Content = append(msg.Content, anthropicBlock{Type: "tool_use", ID: p.ID, Name: p.Name, Input: input})
		case p.Type == genai.PartToolCallResponse:
			text := responseText(p.Response)
			msg.Content = append(msg.Content, anthropicBlock{Type: "tool_result", ToolUseID: p.ID, Content: &text})
		default:
			url, mediaType, data, ok := imageSource(p)
			if !ok || m.Role != genai.RoleUser {
				return anthropicMsg{}, &UnsupportedError{API: Messages, What: label(p.Type) + " part in a " + label(m.Role) + " message"}
			}
			src := &anthropicSource{Type: "url", URL: url}
			if url == "" {
				src = &anthropicSource{Type: "base64", MediaType: mediaType, Data: data}
			}
			msg.Content = append(msg.Content, anthropicBlock{Type: "image", Source: src})
		}
	}
	return msg, nil
}

type (
	anthropicResponse struct {
		ID         string `json:"id"`
		Type       string `json:"type"`
		Model      string `json:"model"`
		StopReason string `json:"stop_reason"`
		Content    []struct {
			Type  string          `json:"type"`
			Text  string          `json:"text"`
			ID    string          `json:"id"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
		} `json:"content"`
		Usage *anthropicUsage `json:"usage"`
	}
	anthropicUsage struct {
		InputTokens              *int64 `json:"input_tokens"`
		CacheCreationInputTokens *int64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     *int64 `json:"cache_read_input_tokens"`
		OutputTokens             *int64 `json:"output_tokens"`
	}
)

// usage converts Anthropic's counts, whose input_tokens leave out cached
// and cache-written tokens, to the conventions' (input includes them).
func (u *anthropicUsage) usage() Usage {
	if u == nil {
		return Usage{}
	}
	out := Usage{Output: u.OutputTokens, CacheRead: u.CacheReadInputTokens, CacheWrite: u.CacheCreationInputTokens}
	if u.InputTokens != nil {
		total := *u.InputTokens
		for _, c := range []*int64{u.CacheReadInputTokens, u.CacheCreationInputTokens} {
			if c != nil {
				total += *c
			}
		}
		out.Input = &total
	}
	return out
}

func (messagesWire) decode(body []byte) (Result, error) {
	var r anthropicResponse
	if err := json.Unmarshal(body, &r); err != nil || r.Type != "message" {
		return Result{}, fmt.Errorf("%w: %s: not a message", ErrBadResponse, Messages)
	}
	res := Result{ResponseModel: r.Model, ResponseID: r.ID, FinishReason: r.StopReason, Usage: r.Usage.usage()}
	res.Output = genai.Message{Role: genai.RoleAssistant, Parts: []genai.Part{}, FinishReason: finishReason(r.StopReason)}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			res.Output.Parts = append(res.Output.Parts, genai.Part{Type: genai.PartText, Content: b.Text})
		case "tool_use":
			res.Output.Parts = append(res.Output.Parts, genai.Part{Type: genai.PartToolCall, ID: b.ID, Name: b.Name, Arguments: b.Input})
		}
	}
	return res, nil
}

func (messagesWire) decodeStream(ev *eventReader, started time.Time) (Result, error) {
	var res Result
	type block struct {
		part genai.Part
		args strings.Builder
	}
	var blocks []*block
	var usage anthropicUsage
	for {
		e, err := ev.next()
		if err != nil {
			return Result{}, err
		}
		var m struct {
			Type    string             `json:"type"`
			Index   int                `json:"index"`
			Message *anthropicResponse `json:"message"`
			Block   struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"content_block"`
			Delta struct {
				Type        string  `json:"type"`
				Text        string  `json:"text"`
				PartialJSON string  `json:"partial_json"`
				StopReason  *string `json:"stop_reason"`
			} `json:"delta"`
			Usage *anthropicUsage `json:"usage"`
			Error struct {
				Type string `json:"type"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(e.data), &m); err != nil {
			return Result{}, fmt.Errorf("%w: %s: an event is not JSON", ErrBadResponse, Messages)
		}
		switch m.Type {
		case "message_start":
			if m.Message != nil {
				res.ResponseID, res.ResponseModel = m.Message.ID, m.Message.Model
				if m.Message.Usage != nil {
					usage = *m.Message.Usage
				}
			}
		case "content_block_start":
			if m.Index != len(blocks) || m.Index > math.MaxInt16 {
				return Result{}, fmt.Errorf("%w: %s: content blocks out of order", ErrBadResponse, Messages)
			}
			b := &block{}
			switch m.Block.Type {
			case "text":
				b.part = genai.Part{Type: genai.PartText}
			case "tool_use":
				b.part = genai.Part{Type: genai.PartToolCall, ID: m.Block.ID, Name: m.Block.Name}
			}
			blocks = append(blocks, b)
		case "content_block_delta":
			if m.Index < 0 || m.Index >= len(blocks) {
				return Result{}, fmt.Errorf("%w: %s: delta for an unknown block", ErrBadResponse, Messages)
			}
			b := blocks[m.Index]
			switch m.Delta.Type {
			case "text_delta":
				markFirstContent(&res, started)
				b.part.Content += m.Delta.Text
			case "input_json_delta":
				markFirstContent(&res, started)
				b.args.WriteString(m.Delta.PartialJSON)
			}
		case "message_delta":
			if m.Delta.StopReason != nil {
				res.FinishReason = *m.Delta.StopReason
			}
			if m.Usage != nil && m.Usage.OutputTokens != nil {
				usage.OutputTokens = m.Usage.OutputTokens
			}
		case "message_stop":
			res.Usage = usage.usage()
			res.Output = genai.Message{Role: genai.RoleAssistant, Parts: []genai.Part{}, FinishReason: finishReason(res.FinishReason)}
			for _, b := range blocks {
				switch b.part.Type {
				case genai.PartText:
					res.Output.Parts = append(res.Output.Parts, b.part)
				case genai.PartToolCall:
					b.part.Arguments = parsedArguments(b.args.String())
					res.Output.Parts = append(res.Output.Parts, b.part)
				}
			}
			return res, nil
		case "error":
			return Result{}, &APIError{Type: m.Error.Type, Status: streamErrorStatus(m.Error.Type)}
		}
	}
}

func (w messagesWire) decodeError(body []byte, sent Params) *APIError {
	typ, _, _, message, requestID := errorBody(body)
	return &APIError{Type: typ, RequestID: requestID, mentioned: mentions(message, sentWireNames(w, sent))}
}
