package replay

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/queries"
)

// TestRecordsOfATraceByTenant: the evidence page reads a trace's replays
// in the tenants it shows; another tenant's replay under the same trace ID
// stays out, and several tenants' replays come oldest first.
func TestRecordsOfATraceByTenant(t *testing.T) {
	ctx := context.Background()
	trace := ledgertest.TraceID(t)
	at := time.Now().UTC().Truncate(time.Millisecond)
	for i, tenant := range []string{"acme", "globex", "acme"} {
		row, err := json.Marshal(Record{RunID: string(rune('a' + i)), At: at.Add(time.Duration(i) * time.Second), Actor: "ana", Purpose: "SUP-1",
			Tenant: tenant, TraceID: trace, SpanID: ledgertest.SpanID(t), Status: "completed", Requested: 1, Completed: 1, Report: "{}"})
		if err != nil {
			t.Fatal(err)
		}
		if err = ledgerStore.Engine().Insert(ctx, queries.MustGet("replay_insert_results"), "JSONEachRow", row); err != nil {
			t.Fatal(err)
		}
	}
	runs := func(tenants ...string) string {
		t.Helper()
		recs, err := Records(ctx, ledgerStore, trace, tenants...)
		if err != nil {
			t.Fatal(err)
		}
		out := ""
		for _, r := range recs {
			out += r.RunID + ":" + r.Tenant + " "
		}
		return out
	}
	if got := runs(); got != "a:acme b:globex c:acme " {
		t.Errorf("every tenant: %q", got)
	}
	if got := runs("acme"); got != "a:acme c:acme " {
		t.Errorf("acme: %q", got)
	}
	if got := runs("globex", "acme"); got != "a:acme b:globex c:acme " {
		t.Errorf("both, named: %q", got)
	}
}
