package fakeprovider

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// usageTruth is what clients were told, summed per provider, endpoint,
// day, model and key ID.
type usageTruth map[string]*usageCount

func (u usageTruth) add(provider, endpoint string, d time.Time, model, key string, c usageCount) {
	k := strings.Join([]string{provider, endpoint, d.Format(time.DateOnly), model, key}, "|")
	if u[k] == nil {
		u[k] = &usageCount{}
	}
	t := u[k]
	t.requests++
	t.input += c.input
	t.output += c.output
	t.cacheRead += c.cacheRead
	t.cacheWrite += c.cacheWrite
}

func startUsage(t *testing.T, now *time.Time) *httptest.Server {
	t.Helper()
	s, err := New(Config{PromptCache: PromptCache{MinTokens: 16, Step: 8}})
	if err != nil {
		t.Fatal(err)
	}
	u, err := NewUsage(s, UsageConfig{AdminKey: "admin-secret", Now: func() time.Time { return *now },
		Keys: map[string]KeyInfo{"sk-a": {ID: "key_a", Project: "proj_1"}, "sk-b": {ID: "key_b", Project: "proj_2"},
			"sk-ant-a": {ID: "apikey_a", Project: "wrkspc_1"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return srv
}

// callReading posts body to path with key and returns the model and the usage the
// client read, JSON or streamed, parsed per API as a client would.
func callReading(t *testing.T, srv *httptest.Server, path, key, body string) (string, usageCount) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if path == "/v1/messages" {
		req.Header.Set("x-api-key", key)
		req.Header.Set("anthropic-version", "2023-06-01")
	} else {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %s %s", path, resp.Status, b)
	}
	type details struct {
		CachedTokens int64 `json:"cached_tokens"`
	}
	type usage struct {
		PromptTokens     int64   `json:"prompt_tokens"`
		CompletionTokens int64   `json:"completion_tokens"`
		InputTokens      int64   `json:"input_tokens"`
		OutputTokens     int64   `json:"output_tokens"`
		CacheRead        int64   `json:"cache_read_input_tokens"`
		CacheCreation    int64   `json:"cache_creation_input_tokens"`
		PromptDetails    details `json:"prompt_tokens_details"`
		InputDetails     details `json:"input_tokens_details"`
	}
	var events []map[string]json.RawMessage
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "[DONE]" {
				var e map[string]json.RawMessage
				if err := json.Unmarshal([]byte(d), &e); err != nil {
					t.Fatal(err)
				}
				events = append(events, e)
			}
		}
	} else {
		var e map[string]json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	un := func(raw json.RawMessage, v any) {
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	var model string
	var u usage
	for _, e := range events {
		var typ string
		if e["type"] != nil {
			un(e["type"], &typ)
		}
		switch {
		case path == "/v1/messages" && typ == "message_start":
			var m struct {
				Model string
				Usage usage
			}
			un(e["message"], &m)
			model, u = m.Model, m.Usage
		case path == "/v1/messages" && typ == "message_delta":
			var d usage
			un(e["usage"], &d)
			u.OutputTokens = d.OutputTokens
		case path == "/v1/responses" && typ == "response.completed":
			var r struct {
				Model string
				Usage usage
			}
			un(e["response"], &r)
			model, u = r.Model, r.Usage
		case typ == "" || typ == "message" || typ == "response":
			if e["model"] != nil && model == "" {
				un(e["model"], &model)
			}
			if e["usage"] != nil && string(e["usage"]) != "null" {
				un(e["usage"], &u)
			}
		}
	}
	switch path {
	case "/v1/chat/completions":
		return model, usageCount{input: u.PromptTokens, output: u.CompletionTokens, cacheRead: u.PromptDetails.CachedTokens}
	case "/v1/responses":
		return model, usageCount{input: u.InputTokens, output: u.OutputTokens, cacheRead: u.InputDetails.CachedTokens}
	}
	return model, usageCount{input: u.InputTokens + u.CacheRead + u.CacheCreation, output: u.OutputTokens, cacheRead: u.CacheRead, cacheWrite: u.CacheCreation}
}

func getJSON(t *testing.T, srv *httptest.Server, path string, q url.Values, header map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path+"?"+q.Encode(), nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, v
}

// TestUsageReportsWhatWasAnswered drives every answering API, JSON and
// streamed, over two days and two keys, and reads both providers' usage
// reports back: each cell must equal the sum of what the clients were told.
func TestUsageReportsWhatWasAnswered(t *testing.T) {
	day1 := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	day2 := day1.Add(24 * time.Hour)
	now := day1
	srv := startUsage(t, &now)
	truth := usageTruth{}
	long := strings.Repeat("the same long prefix for the cache ", 6)
	type req struct {
		at              time.Time
		path, key, body string
	}
	reqs := []req{
		{day1, "/v1/chat/completions", "sk-a", `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"` + long + `"},{"role":"user","content":"one"}]}`},
		{day1, "/v1/chat/completions", "sk-a", `{"model":"gpt-4o-mini","messages":[{"role":"system","content":"` + long + `"},{"role":"user","content":"one more"}]}`},
		{day1, "/v1/chat/completions", "sk-b", `{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"two"}]}`},
		{day1, "/v1/responses", "sk-a", `{"model":"gpt-4o","input":"three"}`},
		{day2, "/v1/responses", "sk-b", `{"model":"gpt-4o","input":"four","stream":true}`},
		{day1, "/v1/messages", "sk-ant-a", `{"model":"claude-sonnet-4-0","max_tokens":50,"system":"` + long + `","messages":[{"role":"user","content":"five"}]}`},
		{day2, "/v1/messages", "sk-ant-a", `{"model":"claude-sonnet-4-0","max_tokens":50,"stream":true,"system":"` + long + `","messages":[{"role":"user","content":"five again"}]}`},
		{day2, "/v1/messages", "sk-unknown", `{"model":"claude-sonnet-4-0","max_tokens":50,"messages":[{"role":"user","content":"six"}]}`},
	}
	keyIDs := map[string]string{"sk-a": "key_a", "sk-b": "key_b", "sk-ant-a": "apikey_a", "sk-unknown": "key_unlisted"}
	for _, r := range reqs {
		now = r.at
		model, got := callReading(t, srv, r.path, r.key, r.body)
		provider, endpoint := "openai", "completions"
		if r.path == "/v1/messages" {
			provider, endpoint = "anthropic", "messages"
		}
		truth.add(provider, endpoint, r.at.Truncate(24*time.Hour), model, keyIDs[r.key], got)
	}
	if truth["openai|completions|2026-11-29|gpt-4o-mini-2024-07-18|key_a"].cacheRead == 0 {
		t.Fatal("the repeated prompt should have read from the cache; the test would not check cached tokens")
	}

	now = day2.Add(time.Hour)
	seen := usageTruth{}
	admin := map[string]string{"Authorization": "Bearer admin-secret"}
	q := url.Values{"start_time": {fmt.Sprint(day1.Truncate(24 * time.Hour).Unix())}, "bucket_width": {"1d"}, "limit": {"1"},
		"group_by": {"model", "api_key_id"}}
	for pages := 0; ; pages++ {
		code, page := getJSON(t, srv, "/v1/organization/usage/completions", q, admin)
		if code != http.StatusOK || page["object"] != "page" {
			t.Fatalf("completions: %d %v", code, page)
		}
		for _, b := range page["data"].([]any) {
			b := b.(map[string]any)
			d := time.Unix(int64(b["start_time"].(float64)), 0).UTC()
			for _, r := range b["results"].([]any) {
				r := r.(map[string]any)
				if r["project_id"] != nil {
					t.Errorf("project_id %v without group_by project_id", r["project_id"])
				}
				c := &usageCount{requests: int64(r["num_model_requests"].(float64)), input: int64(r["input_tokens"].(float64)),
					output: int64(r["output_tokens"].(float64)), cacheRead: int64(r["input_cached_tokens"].(float64))}
				seen[strings.Join([]string{"openai", "completions", d.Format(time.DateOnly), r["model"].(string), r["api_key_id"].(string)}, "|")] = c
			}
		}
		if page["has_more"] != true {
			if pages != 1 {
				t.Errorf("two days at limit 1 should take 2 pages, took %d", pages+1)
			}
			break
		}
		q.Set("page", page["next_page"].(string))
	}
	aq := url.Values{"starting_at": {day1.Truncate(24 * time.Hour).Format(time.RFC3339)}, "group_by[]": {"model", "api_key_id", "workspace_id"}}
	code, rep := getJSON(t, srv, "/v1/organizations/usage_report/messages", aq, map[string]string{"x-api-key": "admin-secret", "anthropic-version": "2023-06-01"})
	if code != http.StatusOK || rep["has_more"] != false {
		t.Fatalf("messages report: %d %v", code, rep)
	}
	for _, b := range rep["data"].([]any) {
		b := b.(map[string]any)
		for _, r := range b["results"].([]any) {
			r := r.(map[string]any)
			cc := r["cache_creation"].(map[string]any)
			write := int64(cc["ephemeral_5m_input_tokens"].(float64) + cc["ephemeral_1h_input_tokens"].(float64))
			read := int64(r["cache_read_input_tokens"].(float64))
			c := &usageCount{input: int64(r["uncached_input_tokens"].(float64)) + read + write, output: int64(r["output_tokens"].(float64)), cacheRead: read, cacheWrite: write}
			seen[strings.Join([]string{"anthropic", "messages", b["starting_at"].(string)[:10], r["model"].(string), r["api_key_id"].(string)}, "|")] = c
		}
	}
	for k, want := range truth {
		got := seen[k]
		if got == nil {
			t.Errorf("%s: not in the reports", k)
			continue
		}
		if k[:6] == "anthro" {
			want.requests = 0 // the messages report counts no requests
		}
		if *got != *want {
			t.Errorf("%s: report %+v, answered %+v", k, *got, *want)
		}
	}
	if len(seen) != len(truth) {
		t.Errorf("reports have %d cells, answers %d", len(seen), len(truth))
	}
}

func TestUsageReportRefusals(t *testing.T) {
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	srv := startUsage(t, &now)
	start := fmt.Sprint(now.Truncate(24 * time.Hour).Unix())
	for _, c := range []struct {
		name   string
		q      url.Values
		header map[string]string
		want   int
	}{
		{"no admin key", url.Values{"start_time": {start}}, nil, 401},
		{"an API key is not an admin key", url.Values{"start_time": {start}}, map[string]string{"Authorization": "Bearer sk-a"}, 401},
		{"no start", url.Values{}, map[string]string{"Authorization": "Bearer admin-secret"}, 400},
		{"hourly", url.Values{"start_time": {start}, "bucket_width": {"1h"}}, map[string]string{"Authorization": "Bearer admin-secret"}, 400},
		{"limit", url.Values{"start_time": {start}, "limit": {"32"}}, map[string]string{"Authorization": "Bearer admin-secret"}, 400},
		{"group", url.Values{"start_time": {start}, "group_by": {"user_id"}}, map[string]string{"Authorization": "Bearer admin-secret"}, 400},
		{"page", url.Values{"start_time": {start}, "page": {"page_AAAA"}}, map[string]string{"Authorization": "Bearer admin-secret"}, 400},
	} {
		code, body := getJSON(t, srv, "/v1/organization/usage/completions", c.q, c.header)
		if code != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, code, body, c.want)
		}
		if strings.Contains(fmt.Sprint(body), "admin-secret") {
			t.Errorf("%s: the answer quotes the admin key", c.name)
		}
	}
	code, _ := getJSON(t, srv, "/v1/organizations/usage_report/messages", url.Values{"starting_at": {now.Format(time.RFC3339)}},
		map[string]string{"x-api-key": "sk-ant-a", "anthropic-version": "2023-06-01"})
	if code != 401 {
		t.Errorf("messages report with an API key: %d, want 401", code)
	}
}
