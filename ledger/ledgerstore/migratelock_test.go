package ledgerstore

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/lease"
	"github.com/docketlabs/docket/ledger/storage/clickhouse"
	"github.com/docketlabs/docket/ledger/storage/clickhouse/clickhousetest"
	"github.com/docketlabs/docket/queries"
)

// The child processes of the tests below: this test binary run again with
// childRole set (TestMain dispatches before opening its own ledger).
const (
	childRole = "LEDGERSTORE_TEST_CHILD"
	childArg  = "LEDGERSTORE_TEST_CHILD_ARG"
)

// runChild plays a role and returns the process's exit code: "front"
// serves a fresh embedded ledger in the directory childArg over
// ClickHouse's HTTP interface (clickhousetest), as a server would, and
// prints its DSN; "migrate" migrates the ledger at the DSN childArg
// through the server adapter, as a gateway starting does.
func runChild(role string) int {
	arg := os.Getenv(childArg)
	switch role {
	case "front":
		if err := clickhousetest.ServeChild(arg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	case "migrate":
		ctx := context.Background()
		eng, err := clickhouse.Open(ctx, arg, clickhouse.Options{})
		if err == nil {
			err = New(eng).Migrate(ctx)
			_ = eng.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown role %q\n", role)
	return 2
}

// startFront serves a fresh ledger from a child process and returns an
// adapter on it and its DSN.
func startFront(t *testing.T) (*clickhouse.Engine, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childRole+"=front", childArg+"="+filepath.Join(t.TempDir(), "ledger"))
	cmd.Stderr = os.Stderr
	dsn := clickhousetest.StartChild(t, cmd)
	eng, err := clickhouse.Open(context.Background(), dsn, clickhouse.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return eng, dsn
}

// Two processes migrate one fresh ledger at the same moment, as two
// gateways starting on one server do, many times over: both succeed and
// the ledger ends fully migrated. Without a lock in the ledger the two
// ran 0007's copy-and-swap at once, swapped the old llm_calls back and
// failed (issue: "start one gateway first").
func TestConcurrentProcessesMigrateOneLedger(t *testing.T) {
	const rounds = 6
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for r := range rounds {
		eng, dsn := startFront(t)
		var wg sync.WaitGroup
		out := make([]string, 2)
		errs := make([]error, 2)
		for i := range 2 {
			wg.Go(func() {
				cmd := exec.Command(os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), childRole+"=migrate", childArg+"="+dsn)
				b, err := cmd.CombinedOutput()
				out[i], errs[i] = string(b), err
			})
		}
		wg.Wait()
		for i := range 2 {
			if errs[i] != nil {
				t.Errorf("round %d: process %d: %v\n%s", r, i, errs[i], out[i])
			}
		}
		checkMigrated(t, eng, len(ms))
		if t.Failed() {
			return
		}
	}
}

// checkMigrated: every migration is recorded once, llm_calls and
// evidence_spans are 0007's tables, and no copy is left over.
func checkMigrated(t *testing.T, eng *clickhouse.Engine, migrations int) {
	t.Helper()
	ctx := context.Background()
	var got []string
	q := "SELECT concat(toString(count()), ' migrations, ', toString(uniqExact(version)), ' distinct') AS s FROM schema_migrations UNION ALL " +
		"SELECT concat(table, '.', name) AS s FROM system.columns WHERE database = currentDatabase() AND name = 'ingest_order' AND table IN ('llm_calls', 'evidence_spans') UNION ALL " +
		"SELECT name AS s FROM system.tables WHERE database = currentDatabase() AND name LIKE '%\\_0007'"
	err := eng.QueryJSON(ctx, "SELECT s FROM ("+q+") ORDER BY s", func(row []byte) error {
		var r struct{ S string }
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		got = append(got, r.S)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{fmt.Sprintf("%d migrations, %d distinct", migrations, migrations), "evidence_spans.ingest_order", "llm_calls.ingest_order"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("ledger after the migrations: %q, want %q", got, want)
	}
}

// A process that died holding the migration lease delays the next one
// until the lease expires by the engine's clock, not forever; a live
// holder that never finishes makes the waiter fail with an error naming
// it once migrateWait has passed.
func TestMigrationLeaseOfAnotherProcess(t *testing.T) {
	ctx := context.Background()
	eng, _ := startFront(t)
	for _, stmt := range must(queries.Schema{}.Bootstrap()) {
		if err := eng.Exec(ctx, stmt.SQL); err != nil {
			t.Fatal(err)
		}
	}
	live, err := lease.New(eng, migrateLease, "live-holder", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := live.Acquire(ctx); err != nil || !held {
		t.Fatalf("held %v, %v", held, err)
	}
	defer func(w time.Duration) { migrateWait = w }(migrateWait)
	migrateWait = 3 * time.Second
	err = New(eng).Migrate(ctx)
	if err == nil || !strings.Contains(err.Error(), "live-holder") {
		t.Fatalf("migrated while another process held the lease: %v", err)
	}
	if err = live.Release(ctx); err != nil {
		t.Fatal(err)
	}

	const ttl = 4 * time.Second
	dead, err := lease.New(eng, migrateLease, "dead-holder", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if held, err := dead.Acquire(ctx); err != nil || !held {
		t.Fatalf("held %v, %v", held, err)
	}
	migrateWait = time.Minute
	start := time.Now()
	if err = New(eng).Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < ttl*3/4 {
		t.Errorf("migrated after %s, before the dead holder's lease (%s) expired", waited, ttl)
	}
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	checkMigrated(t, eng, len(ms))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
