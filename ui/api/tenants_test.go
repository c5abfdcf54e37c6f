package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/queries"
	"github.com/docketlabs/docket/replay"
)

// A trace whose calls span tenants: a reader of both sees the calls and
// the replays of each, and the look is on record in each tenant.
func TestEvidenceOfATraceInTwoTenants(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	other := ledgertest.Call("globex", f.trace, "00f067aa0ba902c1")
	if err := store.InsertCalls(ctx, []ledger.Call{other}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Millisecond)
	for i, tenant := range []string{"globex", "acme"} {
		row, err := json.Marshal(replay.Record{RunID: "run-" + tenant, At: at.Add(time.Duration(i) * time.Second), Actor: "ana", Purpose: "SUP-7",
			Tenant: tenant, TraceID: f.trace, SpanID: other.SpanID, Status: "completed", Requested: 1, Completed: 1, Report: "{}"})
		if err != nil {
			t.Fatal(err)
		}
		if err = store.Engine().Insert(ctx, queries.MustGet("replay_insert_results"), "JSONEachRow", row); err != nil {
			t.Fatal(err)
		}
	}
	admin := f.client(t)
	admin.signIn("admin")
	code, body := admin.do("GET", "/api/v1/evidence/"+f.trace, nil)
	if code != http.StatusOK {
		t.Fatalf("evidence: %d %s", code, body)
	}
	ev := decodeJSON[Evidence](t, body)
	var tenants, runs []string
	for _, c := range ev.Calls {
		tenants = append(tenants, c.Tenant)
	}
	for _, r := range ev.Replays {
		runs = append(runs, r.RunID)
	}
	if slices.Sort(tenants); !slices.Equal(tenants, []string{"acme", "acme", "globex"}) || !slices.Equal(runs, []string{"run-globex", "run-acme"}) {
		t.Fatalf("calls in %v, replays %v; want both tenants' calls, and their replays oldest first", tenants, runs)
	}
	log, err := store.AccessLog(ctx, ledgerstore.AccessFilter{Actor: "admin", Action: access.ActionView})
	if err != nil {
		t.Fatal(err)
	}
	var viewed []string
	for _, e := range log {
		if e.TraceID == f.trace {
			viewed = append(viewed, e.Tenant)
		}
	}
	if slices.Sort(viewed); !slices.Equal(viewed, []string{"acme", "globex"}) {
		t.Fatalf("the look is on record in %v, want acme and globex", viewed)
	}
}
