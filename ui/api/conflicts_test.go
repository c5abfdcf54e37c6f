package api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// A rewrite of a recorded call shows on the evidence page as a conflict,
// next to the call as first recorded; another tenant's conflict on the
// same trace ID is not shown.
func TestEvidenceShowsConflicts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	calls, err := store.CallsByTrace(ctx, f.trace)
	if err != nil || len(calls) != 2 {
		t.Fatalf("calls: %d %v", len(calls), err)
	}
	forged := calls[0]
	forged.ResponseModel, forged.ServiceName, forged.IngestedAt = "forged", "intruder", time.Now().UTC().Add(time.Second)
	elsewhere := forged
	elsewhere.Tenant = "globex"
	if err := store.InsertCalls(ctx, []ledger.Call{forged, elsewhere}); err != nil {
		t.Fatal(err)
	}
	elsewhere.ResponseModel = "forged again"
	if err := store.InsertCalls(ctx, []ledger.Call{elsewhere}); err != nil {
		t.Fatal(err)
	}
	vera := f.client(t)
	vera.signIn("vera")
	code, body := vera.do("GET", "/api/v1/evidence/"+f.trace, nil)
	if code != http.StatusOK {
		t.Fatalf("evidence: %d %s", code, body)
	}
	ev := decodeJSON[Evidence](t, body)
	if ev.Calls[0].ResponseModel != calls[0].ResponseModel {
		t.Fatalf("the rewrite replaced the call: %+v", ev.Calls[0].Call)
	}
	if len(ev.Conflicts) != 1 {
		t.Fatalf("conflicts: %+v", ev.Conflicts)
	}
	if c := ev.Conflicts[0]; c.Tenant != "acme" || c.SpanID != forged.SpanID || c.ConflictingService != "intruder" || c.Source != ledgerstore.SourceCalls {
		t.Fatalf("conflict: %+v", c)
	}
}
