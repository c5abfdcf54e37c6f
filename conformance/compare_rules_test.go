package conformance

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/ledger/pricing"
)

// The verdict rules, on hand-made evidence and rows: what makes a defect,
// a library gap, or a pass.
func TestVerdictRules(t *testing.T) {
	for _, tc := range []struct {
		name                   string
		expected, observed     string
		reported, libraryValue bool
		want                   string
	}{
		{"equal", "gpt-4o-mini", "gpt-4o-mini", true, false, statusOK},
		{"reported but wrong", "gpt-4o-mini", "gpt-4o-mini-2024-07-18", true, true, statusDefect},
		{"reported but missing", "stop", "", true, false, statusDefect},
		{"never reported, row empty", "resp_1", "", false, false, statusGap},
		{"never reported, row repeats the library's wrong value", "gpt-5-2025-08-07", "gpt-5", false, true, statusGap},
		{"never reported, row invents a value", "gpt-5-2025-08-07", "gpt-5", false, false, statusDefect},
	} {
		if got := verdict(tc.expected, tc.observed, tc.reported, tc.libraryValue, same).Status; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	if got := tokenVerdict(0, "NULL", false).Status; got != statusOK {
		t.Errorf("0 tokens stored as NULL: %s", got)
	}
	if got := tokenVerdict(0, "5", false).Status; got != statusDefect {
		t.Errorf("0 tokens stored as 5: %s", got)
	}
	if got := tokenVerdict(1280, "NULL", true).Status; got != statusDefect {
		t.Errorf("reported cache tokens stored as NULL: %s", got)
	}
}

func TestCanonicalFinish(t *testing.T) {
	for _, same := range [][]string{{"stop", "end_turn", "completed"}, {"tool_calls", "tool-calls", "tool_use"}, {"length", "max_tokens", "incomplete"}} {
		for _, s := range same[1:] {
			if canonicalFinish(s) != canonicalFinish(same[0]) {
				t.Errorf("%q and %q differ", s, same[0])
			}
		}
	}
	if canonicalFinish("stop") == canonicalFinish("tool_calls") {
		t.Error("stop equals tool_calls")
	}
}

// A whole call checked against a row: Anthropic usage reported in parts
// (input without cache tokens, plus the cache reads) must be stored
// inclusive, priced as the provider bills it, and content must not leave.
func TestCheckCall(t *testing.T) {
	prices, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	truth := fakeprovider.Answer{API: "messages", RequestedModel: "claude-sonnet-4-5", Model: "claude-sonnet-4-5-20250929",
		ResponseID: "msg_01abc", FinishReason: "end_turn", Text: "Your refund is on its way within five days.",
		Usage: &fakeprovider.AnswerUsage{Input: 1330, CacheRead: 1300, Output: 40}, Received: time.Now()}
	var raw rawDump
	mustJSON(t, `{"spans":[{"trace_id":"t1","span_id":"s1","scope":"lib","attributes":{
		"gen_ai.provider.name":"anthropic","gen_ai.request.model":"claude-sonnet-4-5","gen_ai.response.model":"claude-sonnet-4-5-20250929",
		"gen_ai.response.id":"msg_01abc","gen_ai.usage.input_tokens":30,"gen_ai.usage.cache_read.input_tokens":1300,"gen_ai.usage.output_tokens":40,
		"gen_ai.response.finish_reasons":["end_turn"],"gen_ai.input.messages":"[{\"content\":\"hello Canary-x-chat-Z\"}]"}}]}`, &raw)
	ev := gather(&raw, "t1")
	bill := prices.Cost("anthropic", truth.Model, "chat", truth.Received, pricing.Usage{Input: new(int64(1330)), CacheRead: new(int64(1300)), Output: new(int64(40))})

	good := row{"span_id": "s1", "provider": "anthropic", "request_model": "claude-sonnet-4-5", "response_model": "claude-sonnet-4-5-20250929",
		"response_id": "msg_01abc", "input_tokens": "1330", "output_tokens": "40", "cache_read_tokens": "1300", "cache_write_tokens": "0",
		"finish_reasons": []any{"end_turn"}, "cost_usd": json.Number(bill.String()), "cost_status": "ok", "input_ref": "ref1",
		referencedContent: `[{"content":"hello Canary-x-chat-Z"}]`}
	c := CallResult{Fields: map[string]FieldResult{}}
	checkCall(&c, truth, ev, []row{good}, "", prices, "Canary-x-chat-Z")
	for _, f := range fields {
		if st := c.Fields[f].Status; st != statusOK && st != statusNA {
			t.Errorf("right row: %s is %s %+v", f, st, c.Fields[f])
		}
	}

	// The exclusive count as input, NULL cost status ok at the wrong
	// price, a duplicate row, and the prompt in the exported telemetry.
	bad := row{}
	for k, v := range good {
		bad[k] = v
	}
	bad["input_tokens"], bad["cost_usd"] = "30", json.Number("0.1")
	twin := row{"span_id": "s2", "parent_span_id": "s1"}
	c = CallResult{Fields: map[string]FieldResult{}}
	checkCall(&c, truth, ev, []row{twin, bad}, `{"stringValue":"hello Canary-x-chat-Z"}`, prices, "Canary-x-chat-Z")
	for _, f := range []string{"rows", "input_tokens", "cost", "content"} {
		if c.Fields[f].Status != statusDefect {
			t.Errorf("wrong row: %s is %+v, want a defect", f, c.Fields[f])
		}
	}
	if !strings.Contains(c.Fields["content"].Observed, "prompt leaves the collector") {
		t.Errorf("leak not named: %+v", c.Fields["content"])
	}

	// Two right rows for one call: the call is billed twice.
	twice := row{}
	for k, v := range good {
		twice[k] = v
	}
	twice["span_id"], twice["parent_span_id"] = "s2", "s1"
	c = CallResult{Fields: map[string]FieldResult{}}
	checkCall(&c, truth, ev, []row{good, twice}, "", prices, "Canary-x-chat-Z")
	if f := c.Fields["cost"]; f.Status != statusDefect || !strings.Contains(f.Observed, "2 rows priced") {
		t.Errorf("a call priced twice: %+v", f)
	}
}

// An OpenAI call served from the automatic cache by a library that never
// reports cache reads: the ledger cannot know the bill. Saying so is the
// library's gap; a cost `ok` priced as plain input is the ledger's defect.
func TestCostOfUnreportedCacheReads(t *testing.T) {
	prices, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	truth := fakeprovider.Answer{API: "chat.completions", RequestedModel: "gpt-5", Model: "gpt-5-2025-08-07",
		Usage: &fakeprovider.AnswerUsage{Input: 1320, CacheRead: 1280, Output: 200, Reasoning: 64}, Received: time.Now()}
	upper := prices.Cost("openai", truth.Model, "chat", truth.Received, pricing.Usage{Input: new(int64(1320)), Output: new(int64(200))})
	gap := map[string]FieldResult{"cache_read_tokens": {Status: statusGap}}
	for _, tc := range []struct {
		name string
		row  row
		want string
	}{
		{"said uncertain", row{"span_id": "s1", "cost_status": "unreported_cache_read"}, statusGap},
		{"ok at the upper bound", row{"span_id": "s1", "cost_status": "ok", "cost_usd": json.Number(upper.String())}, statusDefect},
	} {
		if got := costVerdict(truth, []row{tc.row}, gap, prices); got.Status != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, got, tc.want)
		}
	}
	// The first call of the prompt read nothing from the cache, but the
	// library did not say so: the ledger's doubt is the library's gap.
	warm := truth
	warm.Usage = &fakeprovider.AnswerUsage{Input: 1320, Output: 200, Reasoning: 64}
	noGap := map[string]FieldResult{"cache_read_tokens": {Status: statusOK}}
	for _, tc := range []struct {
		name string
		row  row
		want string
	}{
		{"no cache-read count", row{"span_id": "s1", "cost_status": "unreported_cache_read"}, statusGap},
		{"a cache-read count, yet uncertain", row{"span_id": "s1", "cost_status": "unreported_cache_read", "cache_read_tokens": "0"}, statusDefect},
	} {
		if got := costVerdict(warm, []row{tc.row}, noGap, prices); got.Status != tc.want {
			t.Errorf("%s: %+v, want %s", tc.name, got, tc.want)
		}
	}
}

func TestRatchet(t *testing.T) {
	a := Defect{"lib", "chat", "provider", "openai.chat", "openai"}
	b := Defect{"lib", "chat", "ttft", "NULL", "present"}
	unexpected, fixed := ratchet([]Defect{a}, []Defect{b})
	if len(unexpected) != 1 || unexpected[0] != a || len(fixed) != 1 || fixed[0] != b {
		t.Errorf("unexpected %v fixed %v", unexpected, fixed)
	}
	// The same field wrong in another way is a new mismatch.
	changed := a
	changed.Observed = "openai.responses"
	if unexpected, _ := ratchet([]Defect{changed}, []Defect{a}); len(unexpected) != 1 {
		t.Errorf("a changed observation passed: %v", unexpected)
	}
}

func TestMatrixCell(t *testing.T) {
	calls := []CallResult{
		{Fields: map[string]FieldResult{"ttft": {Status: statusOK}, "cost": {Status: statusGap}}},
		{Fields: map[string]FieldResult{"ttft": {Status: statusDefect}, "cost": {Status: statusOK}}},
		{Fields: map[string]FieldResult{"ttft": {Status: statusNA}, "cost": {Status: statusUntraced}}},
	}
	for field, want := range map[string]string{"ttft": "✗ 1/2", "cost": "gap 1/2", "response_id": "—"} {
		if got := cell(calls, field); got != want {
			t.Errorf("%s: %q, want %q", field, got, want)
		}
	}
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatal(err)
	}
}

// An embedding model answers under the requested name, so the name on a
// span says nothing about the response unless the key is one that holds
// the response's model. The AI SDK's ai.* embed spans name only the model
// the caller passed (ai.model.id): the row's empty response model is the
// library's gap. Where a key does hold the response's model, an empty row
// is a defect.
func TestEmbedResponseModel(t *testing.T) {
	prices, err := pricing.Default()
	if err != nil {
		t.Fatal(err)
	}
	truth := fakeprovider.Answer{API: "embeddings", RequestedModel: "text-embedding-3-small", Model: "text-embedding-3-small",
		Usage: &fakeprovider.AnswerUsage{Input: 23}, Received: time.Now()}
	rowFor := func() row {
		return row{"span_id": "s1", "provider": "openai", "request_model": "text-embedding-3-small", "response_model": "",
			"input_tokens": "23", "cost_status": "ok"}
	}
	for _, tc := range []struct {
		name, attrs, want string
	}{
		{"ai.* embed span: only the requested model", `"ai.operationId":"ai.embed.doEmbed","ai.model.provider":"openai.embedding",
			"ai.model.id":"text-embedding-3-small","ai.usage.tokens":23`, statusGap},
		{"GenAI embeddings span: only the requested model", `"gen_ai.operation.name":"embeddings","gen_ai.provider.name":"openai",
			"gen_ai.request.model":"text-embedding-3-small","gen_ai.usage.input_tokens":23`, statusGap},
		{"GenAI embeddings span with the response's model", `"gen_ai.operation.name":"embeddings","gen_ai.provider.name":"openai",
			"gen_ai.request.model":"text-embedding-3-small","gen_ai.response.model":"text-embedding-3-small","gen_ai.usage.input_tokens":23`, statusDefect},
		{"OpenInference embedding span (its model name is the response's)", `"openinference.span.kind":"EMBEDDING",
			"embedding.model_name":"text-embedding-3-small","llm.token_count.prompt":23`, statusDefect},
	} {
		var raw rawDump
		mustJSON(t, `{"spans":[{"trace_id":"t1","span_id":"s1","scope":"lib","attributes":{`+tc.attrs+`}}]}`, &raw)
		c := CallResult{Fields: map[string]FieldResult{}}
		checkCall(&c, truth, gather(&raw, "t1"), []row{rowFor()}, "", prices, "Canary-x-embed-Z")
		if got := c.Fields["response_model"]; got.Status != tc.want {
			t.Errorf("%s: response_model %+v, want %s", tc.name, got, tc.want)
		}
	}
}
