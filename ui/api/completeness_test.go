package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

// TestCompletenessNarrowedToGrantedTenants: a viewer of acme sees acme's
// counts, on both sides, and no other tenant's, not even their names.
func TestCompletenessNarrowedToGrantedTenants(t *testing.T) {
	f := newFixture(t)
	f.account.Add("acme", completeness.Received, 2)
	f.account.Add("acme", completeness.Written, 2)
	f.account.Add("globex", completeness.Received, 5)
	f.account.Add("", completeness.RefusedAuth, 3)
	type body struct {
		Collector *completeness.Snapshot     `json:"collector"`
		Ledger    []ledgerstore.TenantCounts `json:"ledger"`
	}
	// Calls received in an hour no other test writes to.
	at := time.Date(2024, 1, 2, 10, 0, 0, 0, time.UTC)
	var calls []ledger.Call
	for i, tenant := range []string{"acme", "acme", "globex"} {
		calls = append(calls, ledger.Call{Tenant: tenant, TraceID: ledgertest.TraceID(t), SpanID: "00f067aa0ba902b7", StartTime: at, EndTime: at,
			Operation: "chat", Status: ledger.StatusOK, IngestedAt: at.Add(time.Duration(i) * time.Minute)})
	}
	if err := store.InsertCalls(context.Background(), calls); err != nil {
		t.Fatal(err)
	}
	from := "2024-01-02T09:30:00Z&to=2024-01-02T10:30:00Z"
	vera := f.client(t)
	vera.signIn("vera")
	code, raw := vera.do("GET", "/api/v1/completeness?from="+from, nil)
	if code != http.StatusOK {
		t.Fatalf("vera: %d %s", code, raw)
	}
	got := decodeJSON[body](t, raw)
	if got.Collector == nil || len(got.Collector.Tenants) != 1 || got.Collector.Tenants[0].Tenant != "acme" ||
		got.Collector.Tenants[0].Counts[completeness.Written] != 2 {
		t.Errorf("collector side for acme's viewer: %s", raw)
	}
	if len(got.Ledger) != 1 || got.Ledger[0].Tenant != "acme" || got.Ledger[0].Spans != 2 {
		t.Errorf("ledger side for acme's viewer: %s", raw)
	}

	admin := f.client(t)
	admin.signIn("admin")
	_, raw = admin.do("GET", "/api/v1/completeness?from="+from, nil)
	if got := decodeJSON[body](t, raw); got.Collector == nil || len(got.Collector.Tenants) != 3 || len(got.Ledger) != 2 {
		t.Errorf("admin of all tenants: %s", raw)
	}
	if code, raw := admin.do("GET", "/api/v1/completeness?from=2026-01-02&to=2026-01-01", nil); code != http.StatusBadRequest {
		t.Errorf("reversed range: %d %s", code, raw)
	}
}
