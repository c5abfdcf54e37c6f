package queries

import (
	"reflect"
	"strings"
	"testing"
)

// The engine's parser checks every rendered statement in
// ledger/backend (TestClusterDDLParses); here, what the renderer makes.

func TestSingleNodeIsTheFiles(t *testing.T) {
	plain, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := Schema{}.Migrations()
	if err != nil || !reflect.DeepEqual(plain, rendered) {
		t.Fatalf("single-node rendering changed the migrations: %v", err)
	}
}

func TestClusterRendering(t *testing.T) {
	ms, err := Schema{Cluster: "docket"}.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]bool{}
	for _, m := range ms {
		for _, s := range m.Statements {
			all[s.SQL] = true
			if !strings.HasPrefix(s.SQL, "INSERT INTO ") && !strings.Contains(s.SQL, " ON CLUSTER docket") {
				t.Errorf("%s: not ON CLUSTER: %.100s", m.Name, s.SQL)
			}
			// CREATE OR REPLACE VIEW runs again as well (a view's new version).
			if strings.HasPrefix(s.SQL, "CREATE ") && !strings.Contains(s.SQL, " IF NOT EXISTS ") && !strings.HasPrefix(s.SQL, "CREATE OR REPLACE VIEW ") {
				t.Errorf("%s: a replica running it again fails: %.100s", m.Name, s.SQL)
			}
			if strings.Contains(s.SQL, "ENGINE = ReplacingMergeTree") || strings.Contains(s.SQL, "ENGINE = MergeTree") {
				t.Errorf("%s: not replicated: %.100s", m.Name, s.SQL)
			}
		}
	}
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS llm_calls ON CLUSTER docket AS llm_calls_local\nENGINE = Distributed(docket, currentDatabase(), llm_calls_local, cityHash64(tenant, trace_id))",
		"ALTER TABLE evidence_spans_local ON CLUSTER docket ADD COLUMN IF NOT EXISTS content_refs Array(String) AFTER documents",
		"ALTER TABLE evidence_spans ON CLUSTER docket ADD COLUMN IF NOT EXISTS content_refs Array(String) AFTER documents",
		"ALTER TABLE llm_calls_local ON CLUSTER docket ADD INDEX IF NOT EXISTS idx_trace_precise trace_id TYPE bloom_filter(0.001) GRANULARITY 1",
		"ALTER TABLE llm_calls_local ON CLUSTER docket MODIFY SETTING deduplicate_merge_projection_mode = 'rebuild', lightweight_mutation_projection_mode = 'drop'",
		"ALTER TABLE llm_calls_local ON CLUSTER docket MATERIALIZE PROJECTION by_end_user SETTINGS mutations_sync = 0",
		"RENAME TABLE llm_calls_local TO llm_calls_0007_replaced_local, llm_calls_0007_local TO llm_calls_local ON CLUSTER docket",
		"SYSTEM STOP MERGES ON CLUSTER docket llm_calls_0007_local",
		"DROP TABLE IF EXISTS llm_calls_0007_local ON CLUSTER docket SYNC",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS llm_calls_versions ON CLUSTER docket TO row_versions_local AS\n" +
			"SELECT 'llm_calls' AS source, tenant, trace_id, span_id, row_hash, service_name, start_time, ingested_at, ingest_order\nFROM llm_calls_local",
	} {
		if !all[want] {
			t.Errorf("missing:\n%s", want)
		}
	}
	var local string
	for s := range all {
		if strings.HasPrefix(s, "CREATE TABLE IF NOT EXISTS row_versions_local ") {
			local = s
		}
	}
	if !strings.Contains(local, "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/{shard}', '{replica}', ingest_order)") {
		t.Errorf("row_versions_local: %s", local)
	}
	// Guards look at the local table, which holds the columns.
	for _, m := range ms {
		for _, s := range m.Statements {
			if strings.Contains(s.OnlyIf, "table = 'llm_calls'") {
				t.Errorf("guard reads the Distributed table: %s", s.OnlyIf)
			}
		}
	}
	boot, err := Schema{Cluster: "docket"}.Bootstrap()
	// schema_migrations and leases, each a local and a Distributed table.
	if err != nil || len(boot) != 4 || !strings.Contains(boot[0].SQL, "ReplicatedReplacingMergeTree") || !strings.Contains(boot[2].SQL, "leases_local ON CLUSTER docket") {
		t.Fatalf("bootstrap %+v %v", boot, err)
	}
}

func TestClusterRefusesWhatItCannotRender(t *testing.T) {
	r := &renderer{cluster: "c", sharded: map[string]bool{}}
	for _, s := range []Statement{
		{SQL: "CREATE TABLE IF NOT EXISTS t (x String) ENGINE = ReplacingMergeTree ORDER BY x"}, // no shard key
		{SQL: "CREATE TABLE IF NOT EXISTS t (x String) ENGINE = Log", ShardBy: "rand()"},
		{SQL: "ALTER TABLE unknown ADD COLUMN y String"},
		{SQL: "RENAME TABLE a TO b"},
		{SQL: "OPTIMIZE TABLE t FINAL"},
	} {
		if _, err := r.render(s); err == nil {
			t.Errorf("rendered %q", s.SQL)
		}
	}
	if err := (Schema{Cluster: "c; DROP"}).Validate(); err == nil {
		t.Error("a cluster name that is not an identifier was accepted")
	}
}

// A later migration of the kinds expected (columns, views) renders
// without any marker.
func TestClusterLaterMigration(t *testing.T) {
	r := &renderer{cluster: "c", sharded: map[string]bool{"llm_calls": true}}
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"ALTER TABLE llm_calls ADD COLUMN IF NOT EXISTS agent_name String AFTER span_name",
			[]string{"ALTER TABLE llm_calls_local ON CLUSTER c ADD COLUMN IF NOT EXISTS agent_name String AFTER span_name",
				"ALTER TABLE llm_calls ON CLUSTER c ADD COLUMN IF NOT EXISTS agent_name String AFTER span_name"}},
		{"CREATE OR REPLACE VIEW v AS SELECT 1 FROM llm_calls", []string{"CREATE OR REPLACE VIEW v ON CLUSTER c AS SELECT 1 FROM llm_calls"}},
		{"CREATE VIEW IF NOT EXISTS v AS\nSELECT 1", []string{"CREATE VIEW IF NOT EXISTS v ON CLUSTER c AS\nSELECT 1"}},
	} {
		out, err := r.render(Statement{SQL: c.in})
		var got []string
		for _, s := range out {
			got = append(got, s.SQL)
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %q %v\nwant %q", c.in, got, err, c.want)
		}
	}
}

func TestClusterAppendOnlyTableWithoutMarker(t *testing.T) {
	r := &renderer{cluster: "c", sharded: map[string]bool{}}
	out, err := r.render(Statement{SQL: "CREATE TABLE IF NOT EXISTS t\n(x String)\nENGINE = MergeTree\nORDER BY x"})
	if err != nil || len(out) != 2 || out[1].SQL != "CREATE TABLE IF NOT EXISTS t ON CLUSTER c AS t_local\nENGINE = Distributed(c, currentDatabase(), t_local, rand())" {
		t.Fatalf("%+v %v", out, err)
	}
}

// TestClusterDeletesRunOnTheLocalTables: the lifecycle's deletes name the
// local tables ON CLUSTER, and the single-node form is the file.
func TestClusterDeletesRunOnTheLocalTables(t *testing.T) {
	for name, table := range map[string]string{
		"lifecycle_expire_calls": "llm_calls", "lifecycle_expire_evidence": "evidence_spans", "lifecycle_expire_log_refs": "log_content_refs",
	} {
		plain, err := Schema{}.Statement(name)
		if err != nil || plain != MustGet(name) {
			t.Fatalf("%s on one node: %v", name, err)
		}
		got, err := Schema{Cluster: "docket"}.Statement(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "\nDELETE FROM "+table+"_local ON CLUSTER docket\n") || strings.Contains(got, "DELETE FROM "+table+"\n") {
			t.Errorf("%s on a cluster:\n%s", name, got)
		}
	}
}
