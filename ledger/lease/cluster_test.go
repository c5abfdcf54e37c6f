package lease_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// No ClickHouse cluster runs where this is tested. What the lease needs of
// one, and can be checked here by the engine's own parser and settings:
// on the cluster schema, leases is a Distributed table over a replicated
// leases_local, sharded by the lease name, so every claim of one lease
// lands on one shard, whose replicated table deduplicates by the claim's
// token (replicated deduplication is per table, across its replicas); the
// claim, as sent to the Distributed table, keeps its token and waits for
// the shard (distributed_foreground_insert), and the read asks for
// sequential consistency; and the engine's replicated deduplication window
// outlasts a race for one term. Whether Distributed hands the token on to
// the shard, and the replicas' behaviour, only a real cluster shows.
func TestLeaseOnTheClusterSchema(t *testing.T) {
	eng := store.Engine()
	format := func(q string) string {
		t.Helper()
		var got struct {
			F string `json:"f"`
		}
		if err := eng.QueryJSON(ctx, "SELECT formatQuery("+storage.Quote(q)+") AS f", func(row []byte) error { return json.Unmarshal(row, &got) }); err != nil {
			t.Fatalf("the engine does not parse:\n%s\n%v", q, err)
		}
		return got.F
	}
	ms, err := queries.Schema{Cluster: "docket"}.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	var local, distributed string
	for _, m := range ms {
		for _, s := range m.Statements {
			switch f := format(s.SQL); {
			case strings.HasPrefix(f, "CREATE TABLE IF NOT EXISTS leases_local ON CLUSTER docket"):
				local = f
			case strings.HasPrefix(f, "CREATE TABLE IF NOT EXISTS leases ON CLUSTER docket"):
				distributed = f
			}
		}
	}
	if !strings.Contains(local, "ENGINE = ReplicatedMergeTree(") {
		t.Errorf("leases_local is not replicated:\n%s", local)
	}
	if !strings.Contains(distributed, "ENGINE = Distributed(docket, currentDatabase(), leases_local, cityHash64(name))") {
		t.Errorf("leases is not distributed by the lease name:\n%s", distributed)
	}

	claim, err := storage.Bind(queries.MustGet("lease_claim"), map[string]any{
		"token": "lifecycle:7", "name": "lifecycle", "term": uint64(7), "holder": "replica-a", "ttl_ms": uint64(60000)})
	if err != nil {
		t.Fatal(err)
	}
	c := format(claim)
	for _, want := range []string{"INSERT INTO leases ", "insert_deduplicate = 1", "insert_deduplication_token = 'lifecycle:7'", "distributed_foreground_insert = 1"} {
		if !strings.Contains(c, want) {
			t.Errorf("the claim as parsed lacks %q:\n%s", want, c)
		}
	}
	current, err := storage.Bind(queries.MustGet("lease_current"), map[string]any{"name": "lifecycle"})
	if err != nil {
		t.Fatal(err)
	}
	if r := format(current); !strings.Contains(r, "FROM leases") || !strings.Contains(r, "select_sequential_consistency = 1") {
		t.Errorf("the read as parsed:\n%s", r)
	}

	var window struct {
		Blocks  string `json:"blocks"`
		Seconds string `json:"seconds"`
	}
	if err = eng.QueryJSON(ctx, "SELECT (SELECT value FROM system.merge_tree_settings WHERE name = 'replicated_deduplication_window') AS blocks, "+
		"(SELECT value FROM system.merge_tree_settings WHERE name = 'replicated_deduplication_window_seconds') AS seconds",
		func(row []byte) error { return json.Unmarshal(row, &window) }); err != nil {
		t.Fatal(err)
	}
	blocks, errB := strconv.Atoi(window.Blocks)
	seconds, errS := strconv.Atoi(window.Seconds)
	if errB != nil || errS != nil || blocks < 1 || seconds < 60 {
		t.Errorf("replicated deduplication window: %+v (blocks, seconds); a race for one term lasts seconds", window)
	}
	t.Logf("replicated deduplication window of this engine version: %s blocks, %s s", window.Blocks, window.Seconds)
}
