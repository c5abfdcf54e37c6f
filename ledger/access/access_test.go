package access

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/contentstore/contentstoretest"
	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

var ledgerStore *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &ledgerStore) }

const canary = "canary: kim.minjun@example.com 900101-1234567"

// fixture stores content for a call of tenant acme and writes its ledger row.
func fixture(t *testing.T, contentStore contentstore.Store, traceID string) (ref string) {
	t.Helper()
	ctx := context.Background()
	res, err := contentStore.Put(ctx, "acme", "input", []byte(`[{"role":"user","parts":[{"type":"text","content":"`+canary+`"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	c := ledgertest.Call("acme", traceID, "00f067aa0ba902b7")
	c.InputRef, c.ContentStatus = res.Ref.String(), "stored"
	if err := ledgerStore.InsertCalls(ctx, []ledger.Call{c}); err != nil {
		t.Fatal(err)
	}
	return res.Ref.String()
}

func TestRevealChecksAndRecordsEveryAttempt(t *testing.T) {
	ctx := context.Background()
	trace := "5b8efff798038103d269b633813fc60c"
	contentStore := contentstoretest.Dir(t)
	ref := fixture(t, contentStore, trace)
	r := &Reader{Content: contentStore, Ledger: ledgerStore}
	auditor := Principal{User: "ana", Role: RoleAuditor, Tenants: []string{"acme"}}
	req := RevealRequest{Tenant: "acme", TraceID: trace, Ref: ref, Reason: "ticket SUP-1234: customer disputes answer"}

	cases := []struct {
		name   string
		p      Principal
		req    RevealRequest
		detail string
	}{
		{"viewer", Principal{User: "vic", Role: RoleViewer, Tenants: []string{"acme"}}, req, DetailRole},
		{"other tenant", Principal{User: "ana", Role: RoleAuditor, Tenants: []string{"globex"}}, req, DetailTenant},
		{"no reason", auditor, RevealRequest{Tenant: "acme", TraceID: trace, Ref: ref, Reason: "   "}, DetailReason},
		{"ref of another trace", auditor, RevealRequest{Tenant: "acme", TraceID: "0af7651916cd43dd8448eb211c80319c", Ref: ref, Reason: "x"}, DetailRef},
		{"ref of another tenant", Principal{User: "ana", Role: RoleAuditor, Tenants: []string{AllTenants}}, RevealRequest{Tenant: "globex", TraceID: trace, Ref: ref, Reason: "x"}, DetailRef},
		{"bad trace id", auditor, RevealRequest{Tenant: "acme", TraceID: "nope", Ref: ref, Reason: "x"}, DetailInvalidInput},
	}
	for _, tc := range cases {
		content, err := r.Reveal(ctx, tc.p, tc.req)
		if !errors.Is(err, ErrDenied) || content != nil {
			t.Errorf("%s: got %v, content %v; want denial", tc.name, err, content != nil)
		}
		if err != nil && strings.Contains(err.Error(), "kim.minjun") {
			t.Errorf("%s: error carries content", tc.name)
		}
	}
	content, err := r.Reveal(ctx, auditor, req)
	if err != nil || !strings.Contains(string(content), canary) {
		t.Fatalf("auditor reveal: %v", err)
	}

	log, err := ledgerStore.AccessLog(ctx, ledgerstore.AccessFilter{})
	if err != nil {
		t.Fatal(err)
	}
	byDetail := map[string]int{}
	allowed := 0
	for _, e := range log {
		if strings.Contains(e.Reason+e.Detail+e.Ref, "kim.minjun") {
			t.Fatalf("access log holds content: %+v", e)
		}
		if e.Outcome == OutcomeDenied {
			byDetail[e.Detail]++
		}
		if e.Outcome == OutcomeAllowed && e.Actor == "ana" && e.Role == "auditor" && e.Reason == req.Reason && e.Ref == ref && e.TraceID == trace {
			allowed++
		}
	}
	for _, tc := range cases {
		if byDetail[tc.detail] == 0 {
			t.Errorf("no denied row with detail %q", tc.detail)
		}
	}
	if allowed != 1 || len(log) != len(cases)+1 {
		t.Fatalf("log has %d rows (%d allowed matching), want %d", len(log), allowed, len(cases)+1)
	}
}

// TestRevealOfSpanContent: content on another span of the trace (a tool
// call's arguments) is revealed under the same rules; its reference does
// not open another trace.
func TestRevealOfSpanContent(t *testing.T) {
	ctx := context.Background()
	trace, other := "7b8efff798038103d269b633813fc60d", "1af7651916cd43dd8448eb211c80319d"
	contentStore := contentstoretest.Dir(t)
	fixture(t, contentStore, trace)
	res, err := contentStore.Put(ctx, "acme", "tool.call.arguments", []byte(`{"note":"`+canary+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	span := ledgertest.Evidence("acme", trace, "10f067aa0ba902b7", conventions.CategoryGenAI)
	span.SpanName, span.ContentRefs = "execute_tool lookup", []string{res.Ref.String()}
	if err := ledgerStore.InsertEvidence(ctx, []ledger.EvidenceSpan{span}); err != nil {
		t.Fatal(err)
	}
	r := &Reader{Content: contentStore, Ledger: ledgerStore}
	auditor := Principal{User: "ana", Role: RoleAuditor, Tenants: []string{"acme"}}
	content, err := r.Reveal(ctx, auditor, RevealRequest{Tenant: "acme", TraceID: trace, Ref: res.Ref.String(), Reason: "ticket SUP-77"})
	if err != nil || !strings.Contains(string(content), canary) {
		t.Fatalf("reveal of the tool call's arguments: %v", err)
	}
	if _, err := r.Reveal(ctx, auditor, RevealRequest{Tenant: "acme", TraceID: other, Ref: res.Ref.String(), Reason: "ticket SUP-77"}); !errors.Is(err, ErrDenied) {
		t.Fatalf("the span's reference opened another trace: %v", err)
	}
}

func TestRevealOfDeletedContentIsRecordedAsFailed(t *testing.T) {
	ctx := context.Background()
	trace := "6e0c63257de34c92bf9efcd03927272e"
	contentStore := contentstoretest.Dir(t)
	ref := fixture(t, contentStore, trace)
	parsed, _ := contentstore.ParseRef(ref)
	if err := contentStore.Delete(ctx, parsed); err != nil {
		t.Fatal(err)
	}
	r := &Reader{Content: contentStore, Ledger: ledgerStore}
	_, err := r.Reveal(ctx, Principal{User: "adm", Role: RoleAdmin, Tenants: []string{AllTenants}}, RevealRequest{Tenant: "acme", TraceID: trace, Ref: ref, Reason: "legal request"})
	if !errors.Is(err, contentstore.ErrNotFound) {
		t.Fatalf("got %v, want not found", err)
	}
	log, _ := ledgerStore.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: "acme"})
	if len(log) == 0 || log[0].Outcome != OutcomeFailed || log[0].Detail != DetailNotFound || log[0].Actor != "adm" {
		t.Fatalf("newest log row: %+v", log)
	}
}

// TestRevealRecordsMalformedAttempts: attempts with a malformed reference,
// an over-long reason or an invalid trace ID are recorded like any other,
// but only with the parts that passed their checks: the access log stays
// bounded and holds no trace ID that is not one.
func TestRevealRecordsMalformedAttempts(t *testing.T) {
	ctx := context.Background()
	trace := "7b8efff798038103d269b633813fc60c"
	contentStore := contentstoretest.Dir(t)
	ref := fixture(t, contentStore, trace)
	r := &Reader{Content: contentStore, Ledger: ledgerStore}
	long := strings.Repeat("why ", MaxReasonLen)
	for i, tc := range []struct {
		name                     string
		req                      RevealRequest
		wantTrace, wantRef, want string // recorded trace ID, ref and reason
	}{
		{"malformed ref", RevealRequest{Tenant: "acme", TraceID: trace, Ref: "docket-content://../../etc/passwd", Reason: "x"}, trace, "docket-content://../../etc/passwd", "x"},
		{"not a ref at all", RevealRequest{Tenant: "acme", TraceID: trace, Ref: "garbage", Reason: "x"}, trace, "garbage", "x"},
		{"over-long ref", RevealRequest{Tenant: "acme", TraceID: trace, Ref: strings.Repeat("r", 5000), Reason: "x"}, trace, "", "x"},
		{"over-long reason", RevealRequest{Tenant: "acme", TraceID: trace, Ref: ref, Reason: long}, trace, ref, ""},
		{"invalid trace ID", RevealRequest{Tenant: "acme", TraceID: "<script>alert(1)</script>", Ref: ref, Reason: "x"}, "", ref, "x"},
		{"reason not UTF-8", RevealRequest{Tenant: "acme", TraceID: trace, Ref: ref, Reason: "bad\xff"}, trace, ref, ""},
	} {
		actor := "mal" + string(rune('a'+i))
		p := Principal{User: actor, Role: RoleAuditor, Tenants: []string{"acme"}}
		if content, err := r.Reveal(ctx, p, tc.req); !errors.Is(err, ErrDenied) || content != nil {
			t.Errorf("%s: %v; want a denial", tc.name, err)
			continue
		}
		log, err := ledgerStore.AccessLog(ctx, ledgerstore.AccessFilter{Actor: actor})
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != 1 {
			t.Errorf("%s: %d access-log rows, want 1", tc.name, len(log))
			continue
		}
		e := log[0]
		if e.Outcome != OutcomeDenied || e.Detail != DetailInvalidInput || e.TraceID != tc.wantTrace || e.Ref != tc.wantRef || e.Reason != tc.want {
			t.Errorf("%s: recorded %s/%s trace %q ref %.40q reason %.40q; want denied/%s trace %q ref %.40q reason %.40q",
				tc.name, e.Outcome, e.Detail, e.TraceID, e.Ref, e.Reason, DetailInvalidInput, tc.wantTrace, tc.wantRef, tc.want)
		}
	}
	// Nothing can write an unbounded or malformed entry past the checks.
	for _, e := range []ledgerstore.AccessEntry{
		{EventID: "x1", At: time.Now(), Actor: "mallory", Action: "reveal", TraceID: "nope"},
		{EventID: "x2", At: time.Now(), Actor: "mallory", Action: "reveal", Reason: long},
		{EventID: "x3", At: time.Now(), Actor: "mallory", Action: "reveal", Ref: strings.Repeat("r", 5000)},
	} {
		if err := ledgerStore.InsertAccess(ctx, e); err == nil {
			t.Errorf("InsertAccess took %.60v", e)
		}
	}
}

// TestRevealOfLogRecordContent: content that arrived on log records is
// revealed through the span whose context they carried: a call's (its set
// of references) or an evidence span's on record; a record of a span the
// ledger does not hold opens nothing.
func TestRevealOfLogRecordContent(t *testing.T) {
	ctx := context.Background()
	trace := "5c8efff798038103d269b633813fc60e"
	contentStore := contentstoretest.Dir(t)
	fixture(t, contentStore, trace)
	span := ledgertest.Evidence("acme", trace, "20f067aa0ba902b7", conventions.CategoryGenAI)
	span.SpanName = "invoke_agent"
	if err := ledgerStore.InsertEvidence(ctx, []ledger.EvidenceSpan{span}); err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, spanID := range []string{"00f067aa0ba902b7", span.SpanID, "30f067aa0ba902b7"} {
		res, err := contentStore.Put(ctx, "acme", "user.message", []byte(`{"content":"`+canary+` via `+spanID+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		link := ledger.LogContentRef{Tenant: "acme", TraceID: trace, SpanID: spanID, Ref: res.Ref.String(), EventName: "gen_ai.user.message", Time: span.StartTime, IngestedAt: span.IngestedAt}
		if err := ledgerStore.InsertLogRefs(ctx, []ledger.LogContentRef{link}); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, res.Ref.String())
	}
	r := &Reader{Content: contentStore, Ledger: ledgerStore}
	auditor := Principal{User: "ana", Role: RoleAuditor, Tenants: []string{"acme"}}
	for i, want := range []bool{true, true, false} {
		content, err := r.Reveal(ctx, auditor, RevealRequest{Tenant: "acme", TraceID: trace, Ref: refs[i], Reason: "ticket SUP-78"})
		if got := err == nil && strings.Contains(string(content), canary); got != want {
			t.Errorf("log record %d: revealed %v (%v), want %v", i, got, err, want)
		}
		if !want && !errors.Is(err, ErrDenied) {
			t.Errorf("log record %d of a span not on record: %v, want denied", i, err)
		}
	}
}

// TestRecordViewInEveryTenantOrNone: a look at a trace that spans tenants
// is on record in each of them, written together; entries written
// together are all refused when one of them cannot be written.
func TestRecordViewInEveryTenantOrNone(t *testing.T) {
	ctx := context.Background()
	trace := ledgertest.TraceID(t)
	ana := Principal{User: "ana-views", Role: RoleAuditor, Tenants: []string{"acme", "globex"}}
	if err := RecordView(ctx, ledgerStore, trace, View{Principal: ana, Tenant: "acme"}, View{Principal: ana, Tenant: "globex"}); err != nil {
		t.Fatal(err)
	}
	log, err := ledgerStore.AccessLog(ctx, ledgerstore.AccessFilter{Actor: ana.User})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range log {
		if e.Action != ActionView || e.TraceID != trace || e.Outcome != OutcomeAllowed {
			t.Fatalf("recorded %+v", e)
		}
		got = append(got, e.Tenant)
	}
	if slices.Sort(got); !slices.Equal(got, []string{"acme", "globex"}) {
		t.Fatalf("views on record in %v, want acme and globex", got)
	}

	valid := ledgerstore.AccessEntry{EventID: "y1", At: time.Now(), Actor: "bob-views", Action: ActionView, Tenant: "acme", TraceID: trace}
	invalid := valid
	invalid.EventID, invalid.TraceID = "y2", "nope"
	if err := ledgerStore.InsertAccess(ctx, valid, invalid); err == nil {
		t.Fatal("InsertAccess took a malformed entry")
	}
	if log, err := ledgerStore.AccessLog(ctx, ledgerstore.AccessFilter{Actor: valid.Actor}); err != nil || len(log) != 0 {
		t.Fatalf("with a malformed entry beside it, the valid one was written: %+v %v", log, err)
	}
}
