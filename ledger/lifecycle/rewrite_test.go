package lifecycle

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// An attacker who can reach the OTLP port re-sends a real call's span key
// with another response model, tokens, end user and content references,
// and an evidence span's key with another query: every reader still sees
// the original rows, the legal hold by the original end user still holds
// the call, and each rewrite is kept as a visible conflict. An identical
// redelivery changes nothing and is no conflict.
func TestRewrittenResendKeepsTheOriginal(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	orig := f.call(callSpec{endUser: "user-orig", start: start, input: "the real question", output: "the real answer"})
	f.evidence(orig.TraceID, start)
	hold, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-orig"}, Reason: "complaint 4711: preserve"})
	if err != nil {
		t.Fatal(err)
	}
	calls, spans := f.calls(orig.TraceID), f.spans(orig.TraceID)
	if len(calls) != 1 || len(spans) != 1 {
		t.Fatalf("before: %d calls, %d spans", len(calls), len(spans))
	}

	forged := calls[0]
	forged.ResponseModel, forged.ResponseID, forged.EndUserRef = "attacker-model", "resp-forged", "user-else"
	forged.InputTokens, forged.OutputTokens = new(int64(999999)), new(int64(1))
	forged.InputRef, forged.OutputRef = f.span(orig.TraceID, start, "forged input"), ""
	forged.ServiceName = "intruder"
	forged.IngestedAt = time.Now().UTC().Add(time.Second).Truncate(time.Millisecond)
	forgedSpan := spans[0]
	forgedSpan.DBQueryText, forgedSpan.DBQueryStatus = new("DELETE FROM audit"), ledger.QuerySanitized
	forgedSpan.IngestedAt = forged.IngestedAt
	// With a call of its own in the batch, as an attacker's batch would
	// have: a batch of only known keys used to be dropped whole, identical
	// or not.
	other := f.call(callSpec{endUser: "user-else", start: start})
	other.IngestedAt = forged.IngestedAt
	if err := ledgerStore.InsertCalls(ctx, []ledger.Call{forged, other}); err != nil {
		t.Fatal(err)
	}
	if err := ledgerStore.InsertEvidence(ctx, []ledger.EvidenceSpan{forgedSpan}); err != nil {
		t.Fatal(err)
	}
	// The identical redelivery, later, as an SDK retry sends it.
	again := calls[0]
	again.IngestedAt = forged.IngestedAt.Add(time.Second)
	if err := ledgerStore.InsertCalls(ctx, []ledger.Call{again}); err != nil {
		t.Fatal(err)
	}

	if got := f.calls(orig.TraceID); !reflect.DeepEqual(got, calls) {
		t.Fatalf("the re-sends replaced the call:\n got %+v\nwant %+v", got, calls)
	}
	gotSpans := f.spans(orig.TraceID)
	gotSpans = slices.DeleteFunc(gotSpans, func(s ledger.EvidenceSpan) bool { return s.SpanID != spans[0].SpanID })
	if !reflect.DeepEqual(gotSpans, spans) {
		t.Fatalf("the re-send replaced the evidence span:\n got %+v\nwant %+v", gotSpans, spans)
	}
	st, err := f.states(admin, orig.TraceID)
	if err != nil || len(st) != 1 || !slices.Equal(st[0].HoldIDs, []string{hold.ID}) {
		t.Fatalf("the hold by end user no longer covers the call: %+v %v", st, err)
	}
	conflicts, err := ledgerStore.ConflictsByTrace(ctx, orig.TraceID)
	if err != nil {
		t.Fatal(err)
	}
	if len(conflicts) != 2 {
		t.Fatalf("%d conflicts, want the call's and the span's: %+v", len(conflicts), conflicts)
	}
	slices.SortFunc(conflicts, func(a, b ledgerstore.Conflict) int { return strings.Compare(b.Source, a.Source) })
	c := conflicts[0]
	if c.Source != ledgerstore.SourceCalls || c.Tenant != f.tenant || c.SpanID != orig.SpanID || c.ConflictingService != "intruder" ||
		!c.ReceivedAt.Equal(forged.IngestedAt) || !c.OriginalIngestedAt.Equal(orig.IngestedAt.Truncate(time.Millisecond)) ||
		len(c.OriginalHash) != 64 || len(c.ConflictingHash) != 64 || c.OriginalHash == c.ConflictingHash {
		t.Fatalf("call conflict: %+v", c)
	}
	if s := conflicts[1]; s.Source != ledgerstore.SourceEvidence || s.SpanID != spans[0].SpanID || !s.ReceivedAt.Equal(forged.IngestedAt) {
		t.Fatalf("span conflict: %+v", s)
	}
	// Retention long past: the held call stays as it was, the other goes.
	run, err := f.m.Expire(ctx, admin, ExpireOptions{Now: start.AddDate(50, 0, 0), Tenant: f.tenant})
	if err != nil || run.CallsHeld != 1 || run.CallsExpired != 1 {
		t.Fatalf("expiry did not keep exactly the held call: %+v %v", run.ExpiryCounts, err)
	}
	if got := f.calls(orig.TraceID); !reflect.DeepEqual(got, calls) {
		t.Fatalf("after expiry:\n got %+v\nwant %+v", got, calls)
	}
}

// spans returns the evidence spans of a trace.
func (f *fixture) spans(trace string) []ledger.EvidenceSpan {
	f.t.Helper()
	es, err := ledgerStore.EvidenceByTrace(ctx, trace)
	if err != nil {
		f.t.Fatal(err)
	}
	return es
}

// A rewrite that claims a later start and a held end user must not
// surface when retention removes the recorded call: rows expire by key,
// judged as every reader sees them.
func TestRewriteDoesNotSurfaceWhenTheCallExpires(t *testing.T) {
	f := newFixture(t, dirStore(t), Options{})
	start := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	expiry := start.AddDate(50, 0, 0)
	orig := f.call(callSpec{endUser: "user-orig", start: start, input: "the real question"})
	calls := f.calls(orig.TraceID)
	forged := calls[0]
	forged.StartTime, forged.EndTime, forged.EndUserRef = expiry.Add(-24*time.Hour), expiry, "user-held"
	forged.IngestedAt = time.Now().UTC().Add(time.Second).Truncate(time.Millisecond)
	if err := ledgerStore.InsertCalls(ctx, []ledger.Call{forged}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-held"}, Reason: "complaint 4712: preserve"}); err != nil {
		t.Fatal(err)
	}
	if got := f.calls(orig.TraceID); !reflect.DeepEqual(got, calls) {
		t.Fatalf("the rewrite replaced the call:\n got %+v\nwant %+v", got, calls)
	}
	run, err := f.m.Expire(ctx, admin, ExpireOptions{Now: expiry, Tenant: f.tenant})
	if err != nil || run.CallsExpired != 1 || run.CallsHeld != 0 {
		t.Fatalf("expiry: %+v %v", run.ExpiryCounts, err)
	}
	if got := f.calls(orig.TraceID); len(got) != 0 {
		t.Fatalf("after the recorded call expired, the trace shows %+v", got)
	}
}
