package ledgerstore

import (
	"context"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
)

// TestCountByTenant stores calls on the real engine: one flagged, one sent
// again with other content (a conflict), one of another tenant and one
// received outside the range.
func TestCountByTenant(t *testing.T) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	call := func(tenant, span string, received time.Time, issues ...string) ledger.Call {
		in := int64(10)
		return ledger.Call{Tenant: tenant, TraceID: "c0" + span + "00000000000000000000000000", SpanID: span + "000000000000",
			ServiceName: "svc", SpanName: "chat", StartTime: received.Add(-time.Second), EndTime: received, Operation: "chat",
			Provider: "openai", RequestModel: "gpt-4o-mini", Status: "ok", InputTokens: &in, AttributeIssues: issues, IngestedAt: received}
	}
	first := []ledger.Call{
		call("cmp-acme", "0001", now), call("cmp-acme", "0002", now, conventions.IssueOutOfRange+":"+conventions.UsageInput),
		call("cmp-acme", "0003", now), call("cmp-globex", "0004", now), call("cmp-acme", "0005", now.Add(-48*time.Hour)),
	}
	if err := testStore.InsertCalls(ctx, first); err != nil {
		t.Fatal(err)
	}
	again := call("cmp-acme", "0003", now.Add(time.Second))
	again.RequestModel = "gpt-4o"
	if err := testStore.InsertCalls(ctx, []ledger.Call{again}); err != nil {
		t.Fatal(err)
	}
	got, err := testStore.CountByTenant(ctx, now.Add(-time.Hour), now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]TenantCounts{
		"cmp-acme":   {Tenant: "cmp-acme", Spans: 3, Flagged: 1, Conflicts: 1},
		"cmp-globex": {Tenant: "cmp-globex", Spans: 1},
	}
	seen := 0
	for _, g := range got {
		if w, ok := want[g.Tenant]; ok {
			seen++
			if g != w {
				t.Errorf("got %+v, want %+v", g, w)
			}
		}
	}
	if seen != len(want) {
		t.Errorf("ledger side %+v lacks a tenant of %v", got, want)
	}
	if _, err := testStore.CountByTenant(ctx, now, now); err == nil {
		t.Error("an empty range was accepted")
	}
}
