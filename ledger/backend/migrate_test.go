package backend_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/chdbengine"
	"github.com/docketlabs/docket/queries"
)

// Migration 0007 moves a ledger written under "newest insert wins" to
// "first write wins": rows survive unchanged, a rewrite that merges had
// not yet removed gives the original back and becomes a conflict, and the
// migration can run again after a crash at any point.
func TestFirstWriteWinsMigration(t *testing.T) {
	ctx := context.Background()
	eng, err := chdbengine.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	store := ledger.NewStore(eng)
	if err := store.MigrateTo(ctx, 6); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	call := func(span, model string, ingested time.Time) ledger.Call {
		return ledger.Call{Tenant: "acme", TraceID: "0123456789abcdef0123456789abcdef", SpanID: span, ServiceName: "chat-api",
			StartTime: at, EndTime: at.Add(time.Second), ResponseModel: model, EndUserRef: "u-1", FinishReasons: []string{},
			StopSequences: []string{}, RequestParams: map[string]string{"b": "2", "a": "1"}, AttributeIssues: []string{}, IngestedAt: ingested}
	}
	orig := []ledger.Call{call("00000000000000a1", "gpt-4o", at), call("00000000000000a2", "gpt-4o", at)}
	forged := call("00000000000000a1", "forged", at.Add(time.Minute))
	forged.ServiceName = "intruder"
	span := ledger.EvidenceSpan{Tenant: "acme", TraceID: orig[0].TraceID, SpanID: "00000000000000b1", Category: "db",
		StartTime: at, EndTime: at, Documents: []ledger.Document{}, ContentRefs: []string{"r"}, AttributeIssues: []string{}, IngestedAt: at}
	for _, batch := range [][]ledger.Call{orig, {forged}} {
		if err := store.InsertCalls(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.InsertEvidence(ctx, []ledger.EvidenceSpan{span}); err != nil {
		t.Fatal(err)
	}
	before, err := store.CallsByTrace(ctx, orig[0].TraceID)
	if err != nil || len(before) != 2 || before[0].ResponseModel != "forged" {
		t.Fatalf("under 0006 the newest insert wins: %+v %v", before, err)
	}

	// A crash after the call table was swapped, before the span table was.
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	m7 := ms[slices.IndexFunc(ms, func(m queries.Migration) bool { return m.Version == 7 })]
	swapped := 1 + slices.IndexFunc(m7.Statements, func(s queries.Statement) bool { return strings.HasPrefix(s.SQL, "EXCHANGE") })
	for _, stmt := range m7.Statements[:swapped] {
		if err := eng.Exec(ctx, stmt.SQL); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	// A crash after the last statement, before the migration was recorded.
	for _, stmt := range m7.Statements {
		run := stmt.OnlyIf == ""
		if !run {
			if err := eng.QueryJSON(ctx, stmt.OnlyIf, func(row []byte) error { run = string(row) == `{"run":1}`; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if run {
			if err := eng.Exec(ctx, stmt.SQL); err != nil {
				t.Fatal(err)
			}
		}
	}

	got, err := store.CallsByTrace(ctx, orig[0].TraceID)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]ledger.Call(nil), before...)
	want[0] = before[1]
	want[0].SpanID, want[0].ResponseModel = "00000000000000a1", "gpt-4o"
	slices.SortFunc(want, func(a, b ledger.Call) int { return strings.Compare(a.SpanID, b.SpanID) })
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after 0007:\n got %+v\nwant %+v", got, want)
	}
	spans, err := store.EvidenceByTrace(ctx, span.TraceID)
	if err != nil || len(spans) != 1 || !slices.Equal(spans[0].ContentRefs, []string{"r"}) {
		t.Fatalf("evidence after 0007: %+v %v", spans, err)
	}
	conflicts, err := store.ConflictsByTrace(ctx, orig[0].TraceID)
	if err != nil || len(conflicts) != 1 || conflicts[0].SpanID != forged.SpanID || conflicts[0].ConflictingService != "intruder" ||
		conflicts[0].OriginalService != "chat-api" || !conflicts[0].ReceivedAt.Equal(forged.IngestedAt) {
		t.Fatalf("conflicts after 0007: %+v %v", conflicts, err)
	}
	c, err := store.CountCalls(ctx)
	if err != nil || c.Calls != 2 || c.DistinctCalls != 2 {
		t.Fatalf("counts after 0007: %+v %v", c, err)
	}
}
