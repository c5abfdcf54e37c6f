package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/reconcile"
)

func TestReconcileEndpoint(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	day := time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC)
	in, out := int64(100), int64(20)
	var calls []ledger.Call
	for i := 0; i < 99; i++ {
		at := day.Add(time.Duration(i) * time.Minute)
		calls = append(calls, ledger.Call{Tenant: "acme", TraceID: randomTrace(), SpanID: "00f067aa0ba902b7", StartTime: at, EndTime: at,
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
