package providers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/docketlabs/docket/replay/genai"
)

// responsesWire is the OpenAI Responses API (POST /responses).
type responsesWire struct{}

func (responsesWire) path() string { return "/responses" }

func (responsesWire) setHeaders(h http.Header, apiKey string) { chatWire{}.setHeaders(h, apiKey) }

func (responsesWire) params(p Params) (Params, []ParamChange) {
	return unsupported(Params.without, p, Responses, ParamTopK, ParamSeed, ParamStopSequences)
}

func (responsesWire) required(string) bool { return false }

func (responsesWire) wireName(name string) string {
	if name == ParamMaxTokens {
		return "max_output_tokens"
	}
	return name
}

type (
	responsesRequest struct {
		Model           string          `json:"model"`
		Instructions    string          `json:"instructions,omitempty"`
		Input           []responsesItem `json:"input"`
		Tools           []responsesTool `json:"tools,omitempty"`
		Temperature     *float64        `json:"temperature,omitempty"`
		TopP            *float64        `json:"top_p,omitempty"`
		MaxOutputTokens *int64          `json:"max_output_tokens,omitempty"`
		Stream          bool            `json:"stream,omitempty"`
		// Store is false: a replay is not kept for later retrieval at the provider.
		Store bool `json:"store"`
	}
	responsesItem struct {
		Type      string          `json:"type"`
		Role      string          `json:"role,omitempty"`
		Content   []responsesPart `json:"content,omitempty"`
		CallID    string          `json:"call_id,omitempty"`
		Name      string          `json:"name,omitempty"`
		Arguments *string         `json:"arguments,omitempty"`
		Output    *string         `json:"output,omitempty"`
	}
	responsesPart struct {
		Type     string `json:"type"`
		Text     string `json:"text,omitempty"`
		ImageURL string `json:"image_url,omitempty"`
	}
	responsesTool struct {
		Type        string          `json:"type"`
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
)

func (responsesWire) encode(req Request, p Params, stream bool) ([]byte, error) {
	body := responsesRequest{Model: req.Model, Input: []responsesItem{}, Temperature: p.Temperature, TopP: p.TopP, MaxOutputTokens: p.MaxTokens, Stream: stream}
	if len(req.System) > 0 {
		text, err := systemText(Responses, req.System)
		if err != nil {
			return nil, err
		}
		body.Instructions = text
	}
	for _, m := range req.Messages {
		items, err := responsesItems(m)
		if err != nil {
			return nil, err
		}
		body.Input = append(body.Input, items...)
	}
	for _, t := range req.Tools {
		body.Tools = append(body.Tools, responsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	return marshal(body)
}

// responsesItems converts one GenAI message to input items, in order:
// message content, function calls and function call outputs are separate
// items in this API.
func responsesItems(m genai.Message) ([]responsesItem, error) {
	var items []responsesItem
	var msg *responsesItem
	textType := "input_text"
	if m.Role == genai.RoleAssistant {
		textType = "output_text"
	}
	addPart := func(p responsesPart) {
		if msg == nil {
			items = append(items, responsesItem{Type: "message", Role: m.Role})
			msg = &items[len(items)-1]
		}
		msg.Content = append(msg.Content, p)
	}
	for _, p := range m.Parts {
		switch {
		case p.Type == genai.PartText && m.Role != genai.RoleTool:
			addPart(responsesPart{Type: textType, Text: p.Content})
		case p.Type == genai.PartToolCall && m.Role == genai.RoleAssistant:
			args := argumentsString(p.Arguments)
			items = append(items, responsesItem{Type: "function_call", CallID: p.ID, Name: p.Name, Arguments: &args})
			msg = nil
		case p.Type == genai.PartToolCallResponse:
			out := responseText(p.Response)
			items = append(items, responsesItem{Type: "function_call_output", CallID: p.ID, Output: &out})
			msg = nil
		default:
			url, mediaType, data, ok := imageSource(p)
			if !ok || m.Role != genai.RoleUser {
				return nil, &UnsupportedError{API: Responses, What: label(p.Type) + " part in a " + label(m.Role) + " message"}
			}
			if url == "" {
				url = "data:" + mediaType + ";base64," + data
			}
			addPart(responsesPart{Type: "input_image", ImageURL: url})
		}
	}
	if len(items) == 0 {
		items = append(items, responsesItem{Type: "message", Role: m.Role, Content: []responsesPart{}})
	}
	return items, nil
}

type (
	responseObject struct {
		ID                string `json:"id"`
		Model             string `json:"model"`
		Status            string `json:"status"`
		IncompleteDetails *struct {
			Reason string `json:"reason"`
		} `json:"incomplete_details"`
		Error *struct {
			Code string `json:"code"`
		} `json:"error"`
		Output []struct {
			Type    string `json:"type"`
			CallID  string `json:"call_id"`
			Name    string `json:"name"`
			Args    string `json:"arguments"`
			Content []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			} `json:"content"`
		} `json:"output"`
		Usage *struct {
			InputTokens        *int64 `json:"input_tokens"`
			InputTokensDetails *struct {
				CachedTokens *int64 `json:"cached_tokens"`
			} `json:"input_tokens_details"`
			OutputTokens        *int64 `json:"output_tokens"`
			OutputTokensDetails *struct {
				ReasoningTokens *int64 `json:"reasoning_tokens"`
			} `json:"output_tokens_details"`
		} `json:"usage"`
	}
)

func (r responseObject) result() (Result, error) {
	if r.Status == "failed" {
		code := ""
		if r.Error != nil {
			code = r.Error.Code
		}
		return Result{}, &APIError{API: Responses, Status: streamErrorStatus(code), Type: "response_failed", Code: code}
	}
	res := Result{ResponseModel: r.Model, ResponseID: r.ID, FinishReason: r.Status}
	if r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
		res.FinishReason = r.IncompleteDetails.Reason
	}
	out := genai.Message{Role: genai.RoleAssistant, Parts: []genai.Part{}}
	calls := false
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				if text := c.Text + c.Refusal; text != "" {
					out.Parts = append(out.Parts, genai.Part{Type: genai.PartText, Content: text})
				}
			}
		case "function_call":
			calls = true
			out.Parts = append(out.Parts, genai.Part{Type: genai.PartToolCall, ID: it.CallID, Name: it.Name, Arguments: parsedArguments(it.Args)})
		}
	}
	out.FinishReason = finishReason(res.FinishReason)
	if calls && out.FinishReason == "stop" {
		out.FinishReason = "tool_call"
	}
	res.Output = out
	if u := r.Usage; u != nil {
		res.Usage = Usage{Input: u.InputTokens, Output: u.OutputTokens}
		if u.InputTokensDetails != nil {
			res.Usage.CacheRead = u.InputTokensDetails.CachedTokens
		}
		if u.OutputTokensDetails != nil {
			res.Usage.Reasoning = u.OutputTokensDetails.ReasoningTokens
		}
	}
	return res, nil
}

func (responsesWire) decode(body []byte) (Result, error) {
	var r responseObject
	if err := json.Unmarshal(body, &r); err != nil || r.Status == "" {
		return Result{}, fmt.Errorf("%w: %s: not a response object", ErrBadResponse, Responses)
	}
	return r.result()
}

func (responsesWire) decodeStream(ev *eventReader, started time.Time) (Result, error) {
	var ttft *time.Duration
	for {
		e, err := ev.next()
		if err != nil {
			return Result{}, err
		}
		var head struct {
			Type     string          `json:"type"`
			Response json.RawMessage `json:"response"`
			Code     json.RawMessage `json:"code"`
		}
		if err := json.Unmarshal([]byte(e.data), &head); err != nil {
			return Result{}, fmt.Errorf("%w: %s: an event is not JSON", ErrBadResponse, Responses)
		}
		switch head.Type {
		case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta":
			if ttft == nil {
				d := time.Since(started)
				ttft = &d
			}
		case "response.completed", "response.incomplete", "response.failed":
			var r responseObject
			if err := json.Unmarshal(head.Response, &r); err != nil {
				return Result{}, fmt.Errorf("%w: %s: final event without a response", ErrBadResponse, Responses)
			}
			res, err := r.result()
			res.TTFT = ttft
			return res, err
		case "error":
			code := responseText(head.Code)
			return Result{}, &APIError{Type: "error", Code: code, Status: streamErrorStatus(code)}
		}
	}
}

func (w responsesWire) decodeError(body []byte, sent Params) *APIError {
	return openAIError(w, body, sent)
}
