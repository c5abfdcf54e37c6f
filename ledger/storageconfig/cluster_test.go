package storageconfig_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// No ClickHouse cluster runs where this is tested: every statement the
// cluster schema sends (migrations, their guards, the migration record
// table) goes through the engine's own parser instead, and must come back
// still ON CLUSTER, replicated and sharded.
func TestClusterDDLParses(t *testing.T) {
	ctx := context.Background()
	eng := ledgertest.Engine(t)
	// The check can fail: ON CLUSTER in the wrong place does not parse.
	for _, bad := range []string{"EXCHANGE TABLES a ON CLUSTER c AND b", "CREATE MATERIALIZED VIEW IF NOT EXISTS v TO t ON CLUSTER c AS SELECT 1"} {
		if err := eng.QueryJSON(ctx, "SELECT formatQuery("+storage.Quote(bad)+")", func([]byte) error { return nil }); err == nil {
			t.Fatalf("the parser accepted %q", bad)
		}
	}
	schema := queries.Schema{Cluster: "docket"}
	ms, err := schema.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	boot, err := schema.Bootstrap()
	if err != nil {
		t.Fatal(err)
	}
	stmts := append([]queries.Statement(nil), boot...)
	for _, m := range ms {
		stmts = append(stmts, m.Statements...)
	}
	var n, replicated, distributed int
	// The lifecycle's deletes are rendered for the cluster at run time.
	for _, name := range []string{"lifecycle_expire_calls", "lifecycle_expire_evidence", "lifecycle_expire_log_refs"} {
		q, err := schema.Statement(name)
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, queries.Statement{SQL: q})
	}
	for _, s := range stmts {
		for _, q := range []string{s.SQL, s.OnlyIf} {
			if q == "" {
				continue
			}
			var got struct {
				F string `json:"f"`
			}
			err := eng.QueryJSON(ctx, "SELECT formatQuery("+storage.Quote(q)+") AS f", func(row []byte) error { return json.Unmarshal(row, &got) })
			if err != nil {
				t.Errorf("the engine does not parse:\n%s\n%v", q, err)
				continue
			}
			n++
			if q == s.SQL && !strings.HasPrefix(q, "INSERT") && !strings.Contains(got.F, "ON CLUSTER docket") {
				t.Errorf("ON CLUSTER lost in parsing:\n%s", got.F)
			}
			if strings.Contains(got.F, "ENGINE = Replicated") {
				replicated++
			}
			if strings.Contains(got.F, "ENGINE = Distributed(docket, currentDatabase(), ") {
				distributed++
			}
		}
	}
	// Every table of the bootstrap and of the migrations (the lease
	// table is in both).
	plain, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	plainBoot, err := queries.Schema{}.Bootstrap()
	if err != nil {
		t.Fatal(err)
	}
	plain = append(plain, queries.Migration{Statements: plainBoot})
	tables := 0
	for _, m := range plain {
		for _, s := range m.Statements {
			if strings.HasPrefix(s.SQL, "CREATE TABLE ") {
				tables++
			}
		}
	}
	if replicated != tables || distributed != tables {
		t.Fatalf("%d replicated and %d distributed tables, want %d each", replicated, distributed, tables)
	}
	t.Logf("%d statements and guards parsed", n)
}
