package lifecycle

import (
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/extract"
)

// TestUnknownAttributesOfACallFollowTheCall: the unknown attributes the
// content processor stored off a call span (deny by default) are held
// under a hold on the call's end user and deleted on their request, through
// the rows the extractor makes of the span.
func TestUnknownAttributesOfACallFollowTheCall(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	start := time.Now().UTC().Add(-time.Minute)
	put := func(kind, content string) string {
		res, err := f.store.Put(ctx, f.tenant, kind, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		return res.Ref.String()
	}
	input, unknown := put("input.messages", "W asks"), put(conventions.UnknownKind, `{"app.note":"W's account number"}`)

	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(conventions.TenantAttribute, f.tenant)
	span := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	span.SetTraceID(pcommon.TraceID{0xee, byte(start.UnixNano())})
	span.SetSpanID(pcommon.SpanID{0xee})
	span.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
	span.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	a := span.Attributes()
	a.PutStr(conventions.OperationName, "chat")
	a.PutStr(conventions.EndUser, "user-w")
	a.PutStr(conventions.InputRef, input)
	a.PutStr(conventions.UnknownRef, unknown)
	x := &extract.Extractor{DefaultTenant: conventions.DefaultTenant}
	call, ev, kind := x.Extract(rs.Resource(), "", span, time.Now())
	if kind != extract.KindCall || len(ev.ContentRefs) != 1 {
		t.Fatalf("kind %v, evidence refs %v", kind, ev.ContentRefs)
	}
	if err := ledgerStore.InsertCalls(ctx, []ledger.Call{call}); err != nil {
		t.Fatal(err)
	}
	if err := ledgerStore.InsertEvidence(ctx, []ledger.EvidenceSpan{ev}); err != nil {
		t.Fatal(err)
	}

	hold, applied, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-w"}, Reason: "complaint 18"})
	if err != nil || applied.ObjectsHeld != 2 || !f.storeHeld(unknown) {
		t.Fatalf("hold: %+v %v; unknown attributes held %v", applied, err, f.storeHeld(unknown))
	}
	job, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-w"}, Reason: "erasure request"})
	if err != nil || job.Status != JobBlocked || !f.exists(unknown) {
		t.Fatalf("held deletion: %+v %v", job, err)
	}
	if _, err := f.m.ReleaseHold(ctx, admin, hold.ID, "complaint closed"); err != nil {
		t.Fatal(err)
	}
	if f.exists(unknown) || f.exists(input) {
		t.Fatal("after the release, the deletion must take the call's input and its unknown attributes")
	}
}
