package api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/reconcile"
	"github.com/docketlabs/docket/ui/auth"
)

func TestReconcileEndpoint(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	day := time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)
	in, out := int64(100), int64(20)
	var calls []ledger.Call
	for i := 0; i < 99; i++ {
		at := day.Add(time.Duration(i) * time.Minute)
		calls = append(calls, ledger.Call{Tenant: "acme", TraceID: ledgertest.TraceID(t), SpanID: "00f067aa0ba902b7", StartTime: at, EndTime: at,
			Operation: "chat", Provider: usage.ProviderOpenAI, RequestModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18",
			InputTokens: &in, OutputTokens: &out, Status: ledger.StatusOK})
	}
	if err := store.InsertCalls(ctx, calls); err != nil {
		t.Fatal(err)
	}
	rows, err := usage.ParseCSV(usage.ProviderOpenAI, strings.NewReader(
		"date,model,num_model_requests,input_tokens,output_tokens\n2025-03-03,gpt-4o-mini-2024-07-18,100,10000,2000\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := usage.Save(ctx, store, usage.Import{Actor: "admin", Source: usage.SourceFile, Origin: "march.csv", Provider: usage.ProviderOpenAI}, rows); err != nil {
		t.Fatal(err)
	}

	admin := f.client(t)
	admin.signIn("admin")
	code, body := admin.do("GET", "/api/v1/reconcile?from=2025-03-03&to=2025-03-04", nil)
	if code != http.StatusOK {
		t.Fatalf("admin: %d %s", code, body)
	}
	got := decodeJSON[struct {
		Report  reconcile.Report `json:"report"`
		Imports []usage.Import   `json:"imports"`
	}](t, body)
	if len(got.Report.Cells) != 1 || got.Report.Cells[0].State != reconcile.StateLedgerMissing || *got.Report.Cells[0].Drift.Requests != -1 {
		t.Fatalf("report: %s", body)
	}
	if len(got.Imports) == 0 || got.Imports[0].Origin != "march.csv" || got.Imports[0].Actor != "admin" {
		t.Errorf("imports: %+v", got.Imports)
	}
	// A looser tolerance accepts the 1% drift.
	_, body = admin.do("GET", "/api/v1/reconcile?from=2025-03-03&to=2025-03-04&tolerance=1", nil)
	if !strings.Contains(string(body), `"state":"within_tolerance"`) {
		t.Errorf("tolerance 1%%: %s", body)
	}
	for _, bad := range []string{"tolerance=abc", "tolerance=-1", "from=2025-03-04&to=2025-03-03", "provider=gemini", "from=1800-01-01&to=2025-01-01"} {
		if code, body := admin.do("GET", "/api/v1/reconcile?"+bad, nil); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", bad, code, body)
		}
	}
	viewer := f.client(t)
	viewer.signIn("vera")
	if code, _ := viewer.do("GET", "/api/v1/reconcile", nil); code != http.StatusForbidden {
		t.Errorf("a viewer of one tenant: %d, want 403", code)
	}
}

func (c *client) upload(path, contentType, body string, csrf bool) (int, string) {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.f.url+path, strings.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	if csrf {
		req.Header.Set(auth.CSRFHeader, c.csrf)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestUsageUpload(t *testing.T) {
	f := newFixture(t)
	csv := "date,model,workspace_id,api_key_id,uncached_input_tokens,cache_read_input_tokens,output_tokens\n2025-04-04,claude-x,w,k,10,5,3\n"
	admin := f.client(t)
	admin.signIn("admin")
	code, body := admin.upload("/api/v1/usage/imports?provider=anthropic&name=april.csv", "text/csv", csv, true)
	if code != http.StatusCreated || !strings.Contains(body, `"origin":"april.csv (sha256 `) || !strings.Contains(body, `"actor":"admin"`) {
		t.Fatalf("upload: %d %s", code, body)
	}
	_, rb := admin.do("GET", "/api/v1/reconcile?from=2025-04-04&to=2025-04-05", nil)
	if body = string(rb); !strings.Contains(body, `"model":"claude-x"`) || !strings.Contains(body, `"state":"ledger_missing_calls"`) {
		t.Errorf("the uploaded report is not reconciled: %s", body)
	}
	for _, c := range []struct {
		name, path, ct, body string
		csrf                 bool
		want                 int
	}{
		{"no CSRF token", "/api/v1/usage/imports?provider=anthropic&name=a.csv", "text/csv", csv, false, 403},
		{"JSON", "/api/v1/usage/imports?provider=anthropic&name=a.csv", "application/json", "{}", true, 415},
		{"a path as name", "/api/v1/usage/imports?provider=anthropic&name=../../etc/passwd", "text/csv", csv, true, 400},
		{"bad CSV", "/api/v1/usage/imports?provider=anthropic&name=a.csv", "text/csv", "date\n2025-01-01\n", true, 400},
		{"unknown provider", "/api/v1/usage/imports?provider=gemini&name=a.csv", "text/csv", csv, true, 400},
		{"over 32 MiB", "/api/v1/usage/imports?provider=openai&name=a.csv", "text/csv", "date,model,num_model_requests,input_tokens,output_tokens\n2025-01-01," +
			strings.Repeat("m", 33<<20) + ",1,1,1\n", true, 413},
	} {
		if code, body := admin.upload(c.path, c.ct, c.body, c.csrf); code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
	}
	viewer := f.client(t)
	viewer.signIn("aude")
	if code, _ := viewer.upload("/api/v1/usage/imports?provider=anthropic&name=a.csv", "text/csv", csv, true); code != http.StatusForbidden {
		t.Errorf("an auditor of one tenant: %d, want 403", code)
	}
}
