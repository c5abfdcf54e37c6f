package usage_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/fakeprovider"
	"github.com/docketlabs/docket/ledger/usage"
)

func TestParseOpenAICSV(t *testing.T) {
	f, err := os.Open("testdata/openai_usage.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := usage.ParseCSV(usage.ProviderOpenAI, f)
	if err != nil {
		t.Fatal(err)
	}
	rows = usage.Aggregate(rows)
	want := []usage.Row{
		{Provider: "openai", Day: "2026-11-29", Endpoint: "completions", Model: "gpt-4o-mini-2024-07-18", ProjectID: "proj_1", APIKeyID: "key_a",
			Requests: new(int64(125)), InputTokens: 45500, OutputTokens: 9100, CacheReadTokens: 12000},
		{Provider: "openai", Day: "2026-11-29", Endpoint: "embeddings", Model: "text-embedding-3-small", ProjectID: "proj_1", APIKeyID: "key_a",
			Requests: new(int64(30)), InputTokens: 2400},
		{Provider: "openai", Day: "2026-11-30", Endpoint: "completions", Model: "gpt-4o-2024-08-06", ProjectID: "proj_2", APIKeyID: "key_b",
			Requests: new(int64(7)), InputTokens: 7000, OutputTokens: 700},
	}
	checkRows(t, rows, want)
}

func TestParseAnthropicCSV(t *testing.T) {
	f, err := os.Open("testdata/anthropic_usage.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := usage.ParseCSV(usage.ProviderAnthropic, f)
	if err != nil {
		t.Fatal(err)
	}
	want := []usage.Row{
		// Input counts the cache reads and writes (1000 + 4000 + 300).
		{Provider: "anthropic", Day: "2026-11-29", Endpoint: "messages", Model: "claude-sonnet-4-20250514", ProjectID: "wrkspc_1", APIKeyID: "apikey_a",
			InputTokens: 5300, OutputTokens: 800, CacheReadTokens: 4000, CacheWriteTokens: new(int64(300))},
		{Provider: "anthropic", Day: "2026-11-30", Endpoint: "messages", Model: "claude-sonnet-4-20250514", ProjectID: "wrkspc_1", APIKeyID: "apikey_a",
			InputTokens: 10, OutputTokens: 5, CacheWriteTokens: new(int64(0))},
	}
	checkRows(t, rows, want)
}

func checkRows(t *testing.T, got, want []usage.Row) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(got), len(want), got)
	}
	str := func(p *int64) string {
		if p == nil {
			return "nil"
		}
		return time.Duration(*p).String()
	}
	for i := range want {
		g, w := got[i], want[i]
		if str(g.Requests) != str(w.Requests) || str(g.CacheWriteTokens) != str(w.CacheWriteTokens) {
			t.Errorf("row %d: requests %s cache writes %s, want %s %s", i, str(g.Requests), str(g.CacheWriteTokens), str(w.Requests), str(w.CacheWriteTokens))
		}
		g.Requests, w.Requests, g.CacheWriteTokens, w.CacheWriteTokens = nil, nil, nil, nil
		if g != w {
			t.Errorf("row %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestCSVRefusals(t *testing.T) {
	for _, c := range []struct {
		name, provider, csv, want string
	}{
		{"empty", "openai", "", "no header"},
		{"no day column", "openai", "model,num_model_requests,input_tokens,output_tokens\nm,1,1,1\n", "the day"},
		{"no request column", "openai", "date,model,input_tokens,output_tokens\n2026-11-29,m,1,1\n", "num_model_requests"},
		{"negative", "openai", "date,model,num_model_requests,input_tokens,output_tokens\n2026-11-29,m,-1,1,1\n", "out of range"},
		{"not a number", "anthropic", "date,uncached_input_tokens,output_tokens\n2026-11-29,1e3,1\n", "whole number"},
		{"not midnight", "openai", "date,model,num_model_requests,input_tokens,output_tokens\n2026-11-29T05:00:00Z,m,1,1,1\n", "not one UTC day"},
		{"cached over input", "openai", "date,num_model_requests,input_tokens,output_tokens,input_cached_tokens\n2026-11-29,1,1,1,5\n", "exceed"},
		{"both cache write forms", "anthropic", "date,uncached_input_tokens,output_tokens,cache_creation_input_tokens,ephemeral_5m_input_tokens\n2026-11-29,1,1,1,1\n", "not both"},
		{"ragged", "openai", "date,model\n2026-11-29\n", "wrong number of fields"},
		{"provider", "gemini", "date\n", "provider must be"},
		{"NUL in model", "openai", "date,model,num_model_requests,input_tokens,output_tokens\n2026-11-29,a\x00b,1,1,1\n", "UTF-8 identifier"},
	} {
		_, err := usage.ParseCSV(c.provider, strings.NewReader(c.csv))
		if err == nil || !errors.Is(err, usage.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an invalid-report error with %q", c.name, err, c.want)
		}
	}
}

func TestParsePagesRefuseHourlyBuckets(t *testing.T) {
	_, _, err := usage.ParseOpenAIPage(usage.EndpointCompletions, []byte(`{"object":"page","data":[{"object":"bucket","start_time":1795910400,"end_time":1795914000,"results":[]}],"has_more":false,"next_page":null}`))
	if !errors.Is(err, usage.ErrInvalid) {
		t.Errorf("hourly OpenAI bucket: %v", err)
	}
	_, _, err = usage.ParseAnthropicPage([]byte(`{"data":[],"has_more":true,"next_page":null}`))
	if !errors.Is(err, usage.ErrInvalid) {
		t.Errorf("has_more without next_page: %v", err)
	}
}

// fake runs the fake provider with its usage endpoints over real HTTP; now
// is the clock its answers are counted by.
func fake(t *testing.T, now *time.Time) *httptest.Server {
	t.Helper()
	s, err := fakeprovider.New(fakeprovider.Config{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := fakeprovider.NewUsage(s, fakeprovider.UsageConfig{AdminKey: "admin", Now: func() time.Time { return *now },
		Keys: map[string]fakeprovider.KeyInfo{"sk-a": {ID: "key_a", Project: "proj_1"}, "sk-ant": {ID: "apikey_1", Project: "wrkspc_1"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(u)
	t.Cleanup(srv.Close)
	return srv
}

func post(t *testing.T, srv *httptest.Server, path, header, key, body string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
	req.Header.Set(header, key)
	req.Header.Set("anthropic-version", "2023-06-01")
	req.Header.Set("Content-Type", "application/json")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %s", path, resp.Status)
	}
}

// TestPullAndSave pulls both providers' reports from the fake provider over
// 40 days (two pages at 31 buckets a page), stores them in the embedded
// ledger and reads the import's provenance back.
func TestPullAndSave(t *testing.T) {
	ctx := context.Background()
	first := time.Date(2026, 10, 20, 0, 0, 0, 0, time.UTC)
	now := first.Add(2 * time.Hour)
	srv := fake(t, &now)
	post(t, srv, "/v1/chat/completions", "Authorization", "Bearer sk-a", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}`)
	now = first.AddDate(0, 0, 35).Add(time.Hour) // on the second page
	post(t, srv, "/v1/chat/completions", "Authorization", "Bearer sk-a", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"again"}]}`)
	post(t, srv, "/v1/chat/completions", "Authorization", "Bearer sk-a", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"and again"}]}`)
	post(t, srv, "/v1/messages", "x-api-key", "sk-ant", `{"model":"claude-sonnet-4-0","max_tokens":20,"messages":[{"role":"user","content":"hi"}]}`)

	to := first.AddDate(0, 0, 40)
	oa := usage.Client{Provider: usage.ProviderOpenAI, BaseURL: srv.URL, AdminKey: "admin", HTTP: srv.Client()}
	rows, err := oa.Pull(ctx, first, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Day != "2026-10-20" || *rows[0].Requests != 1 || rows[1].Day != "2026-11-24" || *rows[1].Requests != 2 ||
		rows[1].Model != "gpt-4o-mini-2024-07-18" || rows[1].ProjectID != "proj_1" || rows[1].APIKeyID != "key_a" || rows[1].InputTokens == 0 {
		t.Fatalf("openai rows: %+v", rows)
	}
	imp, err := usage.Save(ctx, store, usage.Import{Actor: "test", Source: usage.SourceAPI, Origin: strings.Join(oa.Endpoints(), " "),
		Provider: usage.ProviderOpenAI, FromDay: first.Format(time.DateOnly), ToDay: to.Format(time.DateOnly)}, rows)
	if err != nil {
		t.Fatal(err)
	}
	an := usage.Client{Provider: usage.ProviderAnthropic, BaseURL: srv.URL, AdminKey: "admin", HTTP: srv.Client()}
	arows, err := an.Pull(ctx, first, to)
	if err != nil {
		t.Fatal(err)
	}
	if len(arows) != 1 || arows[0].Requests != nil || arows[0].ProjectID != "wrkspc_1" || arows[0].OutputTokens == 0 {
		t.Fatalf("anthropic rows: %+v", arows)
	}
	if _, err := usage.Save(ctx, store, usage.Import{Actor: "test", Source: usage.SourceAPI, Origin: an.Endpoints()[0], Provider: usage.ProviderAnthropic,
		FromDay: first.Format(time.DateOnly), ToDay: to.Format(time.DateOnly)}, arows); err != nil {
		t.Fatal(err)
	}
	imports, err := usage.Imports(ctx, store, usage.ProviderOpenAI, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(imports) == 0 || imports[0].ID != imp.ID || imports[0].Rows != 2 || imports[0].Actor != "test" || imports[0].FromDay != "2026-10-20" ||
		!strings.Contains(imports[0].Origin, "/v1/organization/usage/embeddings") || !imports[0].At.Equal(imp.At) {
		t.Fatalf("imports: %+v, saved %+v", imports, imp)
	}

	bad := usage.Client{Provider: usage.ProviderOpenAI, BaseURL: srv.URL, AdminKey: "wrong-admin-key", HTTP: srv.Client()}
	_, err = bad.Pull(ctx, first, to)
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong-admin-key") {
		t.Errorf("a wrong admin key: %v", err)
	}
}
