package storageconfig_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/rowbinary"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// Migration 0007 moves a ledger written under "newest insert wins" to
// "first write wins": rows survive unchanged, a rewrite that merges had
// not yet removed gives the original back and becomes a conflict, and the
// migration can run again after a crash at any point: after each of its
// statements (each case in a database of its own), it is run again as a
// restart does, and once more whole, as after a crash before it was
// recorded.
func TestFirstWriteWinsMigration(t *testing.T) {
	ctx := context.Background()
	eng := ledgertest.Engine(t)
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	m7 := ms[slices.IndexFunc(ms, func(m queries.Migration) bool { return m.Version == 7 })]
	for crash := 0; crash <= len(m7.Statements); crash++ {
		db := fmt.Sprintf("crash_after_%d", crash)
		for _, q := range []string{"CREATE DATABASE " + db, "USE " + db} {
			if err := eng.Exec(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		checkMigration(t, eng, m7, crash)
	}
	if err := eng.Exec(ctx, "USE default"); err != nil {
		t.Fatal(err)
	}
}

func checkMigration(t *testing.T, eng storage.Engine, m7 queries.Migration, crash int) {
	t.Helper()
	ctx := context.Background()
	store := ledgerstore.New(eng)
	if err := store.MigrateTo(ctx, 6); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	call := func(span, model string, ingested time.Time) ledger.Call {
		c := ledgertest.Call("acme", "0123456789abcdef0123456789abcdef", span)
		c.ServiceName, c.ResponseModel, c.EndUserRef, c.RequestParams = "chat-api", model, "u-1", map[string]string{"b": "2", "a": "1"}
		c.StartTime, c.EndTime, c.IngestedAt = at, at.Add(time.Second), ingested
		return c
	}
	orig := []ledger.Call{call("00000000000000a1", "gpt-4o", at), call("00000000000000a2", "gpt-4o", at)}
	forged := call("00000000000000a1", "forged", at.Add(time.Minute))
	forged.ServiceName = "intruder"
	span := ledgertest.Evidence("acme", orig[0].TraceID, "00000000000000b1", conventions.CategoryDB)
	span.StartTime, span.EndTime, span.IngestedAt, span.ContentRefs = at, at, at, []string{"r"}
	// Written as a 0006 ledger was: the rows alone, since the calls kept
	// per trace (0012) do not exist yet.
	for _, batch := range [][]ledger.Call{orig, {forged}} {
		rows, err := rowbinary.EncodeCalls(nil, batch)
		if err != nil {
			t.Fatal(err)
		}
		if err = eng.Insert(ctx, queries.MustGet("insert_llm_calls"), "RowBinary", rows); err != nil {
			t.Fatal(err)
		}
	}
	row, err := json.Marshal(span)
	if err != nil {
		t.Fatal(err)
	}
	if err = eng.Insert(ctx, queries.MustGet("insert_evidence_spans"), "JSONEachRow", row); err != nil {
		t.Fatal(err)
	}
	// Read the table itself: the readers' view of calls (0008) does not
	// exist yet.
	var before []string
	err = eng.QueryJSON(ctx, "SELECT response_model FROM llm_calls FINAL WHERE trace_id = '"+orig[0].TraceID+"' ORDER BY span_id", func(b []byte) error {
		before = append(before, string(b))
		return nil
	})
	if err != nil || len(before) != 2 || !strings.Contains(before[0], "forged") {
		t.Fatalf("under 0006 the newest insert wins: %q %v", before, err)
	}

	runStatements(t, eng, m7.Statements[:crash])
	if err := store.Migrate(ctx); err != nil {
		t.Fatalf("crash after statement %d: %v", crash, err)
	}
	runStatements(t, eng, m7.Statements)

	got, err := store.CallsByTrace(ctx, orig[0].TraceID)
	if err != nil {
		t.Fatal(err)
	}
	want := append([]ledger.Call(nil), orig...)
	for i := range want {
		want[i].EvidenceSpanIDs, want[i].MemberRefs = []string{}, []string{}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("crash after statement %d: calls\n got %+v\nwant %+v", crash, got, want)
	}
	spans, err := store.EvidenceByTrace(ctx, span.TraceID)
	if err != nil || len(spans) != 1 || !slices.Equal(spans[0].ContentRefs, []string{"r"}) {
		t.Fatalf("crash after statement %d: evidence %+v %v", crash, spans, err)
	}
	conflicts, err := store.ConflictsByTrace(ctx, orig[0].TraceID)
	if err != nil || len(conflicts) != 1 || conflicts[0].SpanID != forged.SpanID || conflicts[0].ConflictingService != "intruder" ||
		conflicts[0].OriginalService != "chat-api" || !conflicts[0].ReceivedAt.Equal(forged.IngestedAt) {
		t.Fatalf("crash after statement %d: conflicts %+v %v", crash, conflicts, err)
	}
	c, err := store.CountCalls(ctx)
	if err != nil || c.Calls != 2 || c.DistinctCalls != 2 || c.Conflicts != 1 {
		t.Fatalf("crash after statement %d: counts %+v %v", crash, c, err)
	}
}

// runStatements runs migration statements as Migrate does, guards included.
func runStatements(t *testing.T, eng storage.Engine, stmts []queries.Statement) {
	t.Helper()
	ctx := context.Background()
	for i, stmt := range stmts {
		run := stmt.OnlyIf == ""
		if !run {
			if err := eng.QueryJSON(ctx, stmt.OnlyIf, func(row []byte) error { run = string(row) == `{"run":1}`; return nil }); err != nil {
				t.Fatal(err)
			}
		}
		if run {
			if err := eng.Exec(ctx, stmt.SQL); err != nil {
				t.Fatalf("statement %d: %v", i+1, err)
			}
		}
	}
}
