package fakeprovider

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// responsesRequest is the part of a Responses API request the server reads.
// Fields it does not know are ignored.
type responsesRequest struct {
	Model           string         `json:"model"`
	Input           responsesInput `json:"input"`
	Instructions    *string        `json:"instructions"`
	Temperature     *float64       `json:"temperature"`
	TopP            *float64       `json:"top_p"`
	MaxOutputTokens *int           `json:"max_output_tokens"`
	Stream          bool           `json:"stream"`
	Tools           []flatTool     `json:"tools"`
}

// responsesInput accepts "input" as a string (one user message) or an array
// of input items. Only message items are kept, with their text parts.
type responsesInput struct {
	set   bool
	items []responsesItem
}

type responsesItem struct {
	Type    string      `json:"type"`
	Role    string      `json:"role"`
	Content textContent `json:"content"`
}

func (in *responsesInput) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	in.set = true
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		in.items = []responsesItem{{Type: "message", Role: "user", Content: textContent(s)}}
		return nil
	}
	var items []responsesItem
	if err := json.Unmarshal(b, &items); err != nil {
		return errors.New("input must be a string or an array of input items")
	}
	in.items = items
	return nil
}

var responsesRoles = map[string]bool{"user": true, "assistant": true, "system": true, "developer": true}

// minOutputTokens is the Responses API's lower bound for max_output_tokens.
const minOutputTokens = 16

// responsesParamNames names Params fields as Responses API requests do.
func responsesParamNames(p string) string {
	if p == "max_tokens" {
		return "max_output_tokens"
	}
	return p
}

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	req, c, apiErr := s.readResponsesRequest(w, r)
	if apiErr != nil {
		apiErr.write(w, responsesParamNames)
		return
	}
	comp, apiErr := s.generate(r.Context(), c)
	if apiErr != nil {
		apiErr.write(w, responsesParamNames)
		return
	}
	comp.id = "resp_" + randomString(50, hexDigits)
	for j := range comp.choices[0].toolCalls {
		comp.choices[0].toolCalls[j].ID = "call_" + randomString(24, base62)
	}
	resp := newResponse(comp, req, c.model)
	s.record("responses", req.Stream, start, comp, c.msgs, resp.Status)
	w.Header().Set("openai-processing-ms", strconv.FormatInt(time.Since(start).Milliseconds(), 10))
	if req.Stream {
		writeResponseStream(w, resp)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) readResponsesRequest(w http.ResponseWriter, r *http.Request) (*responsesRequest, call, *APIError) {
	body, apiErr := s.readBody(w, r)
	if apiErr != nil {
		return nil, call{}, apiErr
	}
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, call{}, invalidJSON()
	}
	if req.Model == "" {
		return nil, call{}, BadRequest("model", "missing_required_parameter", "Missing required parameter: 'model'.")
	}
	model, ok := s.lookupModel(req.Model)
	if !ok {
		return nil, call{}, modelNotFound(req.Model)
	}
	if !req.Input.set {
		return nil, call{}, BadRequest("input", "missing_required_parameter", "Missing required parameter: 'input'.")
	}
	if len(req.Input.items) == 0 {
		return nil, call{}, BadRequest("input", "empty_array", "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.")
	}
	var msgs []Message
	if req.Instructions != nil {
		// Instructions act as a system message at the head of the input.
		msgs = append(msgs, Message{Role: "system", Text: *req.Instructions})
	}
	for i, it := range req.Input.items {
		if it.Type != "" && it.Type != "message" {
			continue // tool calls and their outputs are not represented
		}
		if !responsesRoles[it.Role] {
			return nil, call{}, BadRequest(fmt.Sprintf("input[%d].role", i), "invalid_value",
				"Invalid value for 'role'. Supported values are: 'assistant', 'system', 'developer', and 'user'.")
		}
		msgs = append(msgs, Message{Role: it.Role, Text: string(it.Content)})
	}
	for _, check := range []*APIError{
		checkRange("temperature", req.Temperature, 0, 2),
		checkRange("top_p", req.TopP, 0, 1),
		checkIntRange("max_output_tokens", req.MaxOutputTokens, minOutputTokens, 1<<31-1),
	} {
		if check != nil {
			return nil, call{}, check
		}
	}
	return &req, call{model: model, requested: req.Model, msgs: msgs, n: 1, tools: fromFlatTools(req.Tools), cacheUpTo: -1,
		params: Params{Temperature: req.Temperature, TopP: req.TopP, MaxTokens: req.MaxOutputTokens}}, nil
}

// Wire shapes of the Responses API, field for field as OpenAI sends them.
type (
	responseObject struct {
		ID                 string             `json:"id"`
		Object             string             `json:"object"`
		CreatedAt          int64              `json:"created_at"`
		Status             string             `json:"status"`
		Error              *struct{}          `json:"error"`
		IncompleteDetails  *incompleteDetails `json:"incomplete_details"`
		Instructions       *string            `json:"instructions"`
		MaxOutputTokens    *int               `json:"max_output_tokens"`
		Model              string             `json:"model"`
		Output             []responseItem     `json:"output"`
		ParallelToolCalls  bool               `json:"parallel_tool_calls"`
		PreviousResponseID *string            `json:"previous_response_id"`
		Reasoning          reasoningConfig    `json:"reasoning"`
		ServiceTier        string             `json:"service_tier"`
		Store              bool               `json:"store"`
		Temperature        float64            `json:"temperature"`
		Text               responseTextConfig `json:"text"`
		ToolChoice         string             `json:"tool_choice"`
		Tools              []struct{}         `json:"tools"`
		TopP               float64            `json:"top_p"`
		Truncation         string             `json:"truncation"`
		Usage              *responseUsage     `json:"usage"`
		User               *string            `json:"user"`
		Metadata           map[string]string  `json:"metadata"`
	}
	incompleteDetails struct {
		Reason string `json:"reason"`
	}
	reasoningConfig struct {
		Effort  *string `json:"effort"`
		Summary *string `json:"summary"`
	}
	responseTextConfig struct {
		Format struct {
			Type string `json:"type"`
		} `json:"format"`
	}
	// responseItem is a message or a reasoning item of "output".
	responseItem struct {
		Type    string       `json:"type"`
		ID      string       `json:"id"`
		Status  string       `json:"status,omitempty"`
		Role    string       `json:"role,omitempty"`
		Content []outputText `json:"content,omitempty"`
		Summary *[]struct{}  `json:"summary,omitempty"`
		// function_call items
		CallID    string `json:"call_id,omitempty"`
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments,omitempty"`
	}
	outputText struct {
		Type        string     `json:"type"`
		Text        string     `json:"text"`
		Annotations []struct{} `json:"annotations"`
	}
	responseUsage struct {
		InputTokens        int `json:"input_tokens"`
		InputTokensDetails struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"input_tokens_details"`
		OutputTokens        int `json:"output_tokens"`
		OutputTokensDetails struct {
			ReasoningTokens int `json:"reasoning_tokens"`
		} `json:"output_tokens_details"`
		TotalTokens int `json:"total_tokens"`
	}
)

func newResponse(c *completion, req *responsesRequest, model Model) responseObject {
	resp := responseObject{
		ID: c.id, Object: "response", CreatedAt: c.created, Status: "completed",
		Instructions: req.Instructions, MaxOutputTokens: req.MaxOutputTokens, Model: c.snapshot,
		ParallelToolCalls: true, ServiceTier: serviceTier, Store: true,
		Temperature: 1, TopP: 1, ToolChoice: "auto", Tools: []struct{}{}, Truncation: "disabled",
		Metadata: map[string]string{},
	}
	resp.Text.Format.Type = "text"
	if req.Temperature != nil {
		resp.Temperature = *req.Temperature
	}
	if req.TopP != nil {
		resp.TopP = *req.TopP
	}
	ch := c.choices[0]
	if model.Reasoning {
		resp.Output = append(resp.Output, responseItem{Type: "reasoning", ID: "rs_" + randomString(50, hexDigits), Summary: &[]struct{}{}})
	}
	for _, tc := range ch.toolCalls {
		resp.Output = append(resp.Output, responseItem{
			Type: "function_call", ID: "fc_" + randomString(50, hexDigits), Status: "completed",
			CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments,
		})
	}
	if len(ch.toolCalls) == 0 {
		resp.Output = append(resp.Output, responseItem{
			Type: "message", ID: "msg_" + randomString(50, hexDigits), Status: "completed", Role: "assistant",
			Content: []outputText{{Type: "output_text", Text: ch.text, Annotations: []struct{}{}}},
		})
	}
	if ch.finishReason == "length" {
		resp.Status = "incomplete"
		resp.IncompleteDetails = &incompleteDetails{Reason: "max_output_tokens"}
		resp.Output[len(resp.Output)-1].Status = "incomplete"
	}
	if u := c.usage; u != nil {
		ru := &responseUsage{InputTokens: u.prompt, OutputTokens: u.completion, TotalTokens: u.prompt + u.completion}
		ru.InputTokensDetails.CachedTokens = u.cached
		ru.OutputTokensDetails.ReasoningTokens = u.reasoning
		resp.Usage = ru
	}
	return resp
}

// writeResponseStream sends resp as the Responses API streams: the response
// in progress, the output items with one text delta per token, then
// response.completed (or response.incomplete) carrying the final object
// with usage. Every event has a type and a sequence number.
func writeResponseStream(w http.ResponseWriter, final responseObject) {
	es := startEventStream(w)
	seq := 0
	send := func(typ string, fields map[string]any) bool {
		fields["type"] = typ
		fields["sequence_number"] = seq
		seq++
		return es.send(typ, fields) == nil
	}

	inProgress := final
	inProgress.Status, inProgress.IncompleteDetails, inProgress.Usage = "in_progress", nil, nil
	inProgress.Output = []responseItem{}
	if !send("response.created", map[string]any{"response": inProgress}) ||
		!send("response.in_progress", map[string]any{"response": inProgress}) {
		return
	}
	for i, item := range final.Output {
		if item.Type == "function_call" {
			started := item
			started.Status, started.Arguments = "in_progress", ""
			if !send("response.output_item.added", map[string]any{"output_index": i, "item": started}) {
				return
			}
			for _, tok := range splitTokens(item.Arguments) {
				if !send("response.function_call_arguments.delta", map[string]any{"item_id": item.ID, "output_index": i, "delta": tok}) {
					return
				}
			}
			if !send("response.function_call_arguments.done", map[string]any{"item_id": item.ID, "output_index": i, "arguments": item.Arguments}) ||
				!send("response.output_item.done", map[string]any{"output_index": i, "item": item}) {
				return
			}
			continue
		}
		if item.Type != "message" {
			if !send("response.output_item.added", map[string]any{"output_index": i, "item": item}) ||
				!send("response.output_item.done", map[string]any{"output_index": i, "item": item}) {
				return
			}
			continue
		}
		text := item.Content[0].Text
		started := item
		started.Status, started.Content = "in_progress", []outputText{}
		emptyPart := outputText{Type: "output_text", Annotations: []struct{}{}}
		if !send("response.output_item.added", map[string]any{"output_index": i, "item": started}) ||
			!send("response.content_part.added", map[string]any{"item_id": item.ID, "output_index": i, "content_index": 0, "part": emptyPart}) {
			return
		}
		for _, tok := range splitTokens(text) {
			if !send("response.output_text.delta", map[string]any{"item_id": item.ID, "output_index": i, "content_index": 0, "delta": tok, "logprobs": []struct{}{}}) {
				return
			}
		}
		if !send("response.output_text.done", map[string]any{"item_id": item.ID, "output_index": i, "content_index": 0, "text": text, "logprobs": []struct{}{}}) ||
			!send("response.content_part.done", map[string]any{"item_id": item.ID, "output_index": i, "content_index": 0, "part": item.Content[0]}) ||
			!send("response.output_item.done", map[string]any{"output_index": i, "item": item}) {
			return
		}
	}
	done := "response.completed"
	if final.Status == "incomplete" {
		done = "response.incomplete"
	}
	send(done, map[string]any{"response": final})
}
