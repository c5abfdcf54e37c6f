package ledgerstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage"
)

// The ledger totals, counted from the kept rows, agree with the merge of
// the ledger's rows in the states this package's tests leave: conflicts
// from concurrent and same-millisecond writers, rewrites, a trace of
// 20,000 spans. Tests outside the package run after those inside it.
// The refresh test leaves writes whose rewrite failed: their writers got
// the error, and the totals count those calls when they redeliver, as
// every reader of the kept rows sees them; the redelivery's rewrite is
// done here first.
func TestCountsMatchTheMerge(t *testing.T) {
	ctx := context.Background()
	store := ledgerstore.SharedStore()
	var traces []string
	q, err := storage.Bind("SELECT DISTINCT trace_id FROM llm_calls WHERE tenant = {tenant:String}", map[string]any{"tenant": ledgerstore.RefreshTenant})
	if err != nil {
		t.Fatal(err)
	}
	if err = store.Engine().QueryJSON(ctx, q, func(row []byte) error {
		var r struct {
			TraceID string `json:"trace_id"`
		}
		err := json.Unmarshal(row, &r)
		traces = append(traces, r.TraceID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err = store.RefreshCalls(ctx, traces); err != nil {
		t.Fatal(err)
	}
	if err = ledgertest.CountsMatchTheMerge(ctx, store); err != nil {
		t.Fatal(err)
	}
}
