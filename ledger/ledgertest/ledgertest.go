// Package ledgertest gives a test process its embedded ledger: chDB allows
// one data directory per process, so a package's tests share one, opened in
// TestMain, and isolate themselves by tenant or trace. DOCKET_TEST_ENGINE
// chooses the engine the store runs on (ledger/storage/storagetest).
package ledgertest

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/storage/chdb"
	"github.com/docketlabs/docket/ledger/storage/storagetest"
)

// Main opens a migrated ledger in a temporary directory, sets *store, runs
// the tests and exits with their code, removing the directory.
func Main(m *testing.M, store **ledgerstore.Store) {
	os.Exit(run(m, store))
}

func run(m *testing.M, store **ledgerstore.Store) int {
	if shorttest.SkipPackage(shorttest.ChDB) {
		return 0
	}
	dir, err := os.MkdirTemp("", "ledger-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	eng, err := chdb.Open(filepath.Join(dir, "ledger"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() { _ = eng.Close() }()
	// DOCKET_TEST_ENGINE runs the package's storage tests through the
	// server adapter or on a live server (ledger/storage/storagetest).
	target, closeTarget, err := storagetest.Open(context.Background(), eng)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer closeTarget()
	*store = ledgerstore.New(target)
	if err := (*store).Migrate(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if code == 0 {
		if err := CountsMatchTheMerge(context.Background(), *store); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return code
}

//go:embed testdata/count_calls_merged.sql
var countCallsMerged string

// CountsMatchTheMerge checks the store's counts, read from the kept rows,
// against the statistics query as it was when it merged every call of the
// ledger again. Main checks it after a package's tests have left the
// ledger in their states (rewrites, conflicts, expiry, holds, tenants).
func CountsMatchTheMerge(ctx context.Context, store *ledgerstore.Store) error {
	got, err := store.CountCalls(ctx)
	if err != nil {
		return err
	}
	var want ledgerstore.Counts
	if err = store.Engine().QueryJSON(ctx, countCallsMerged, func(row []byte) error { return json.Unmarshal(row, &want) }); err != nil {
		return fmt.Errorf("ledgertest: merged counts: %w", err)
	}
	// The physical rows are the same count in both, and background merges
	// may lower it between the two reads.
	got.StoredRows = want.StoredRows
	if got != want {
		return fmt.Errorf("ledgertest: counts from the kept rows %+v, merged from the ledger %+v", got, want)
	}
	return nil
}

// Engine opens an embedded engine in a temporary directory for one test,
// skipped under -short, and closes it when the test ends.
func Engine(t testing.TB) *chdb.Engine {
	t.Helper()
	shorttest.Needs(t, shorttest.ChDB)
	eng, err := chdb.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = eng.Close() })
	return eng
}

// EveryRow calls fn with every row of every ledger table, as JSON, so a
// test can search all that was written (views hold no data of their own,
// and may need parameters).
func EveryRow(ctx context.Context, eng storage.Engine, fn func(table string, row []byte) error) error {
	var tables []string
	err := eng.QueryJSON(ctx, "SELECT name FROM system.tables WHERE database = currentDatabase() AND engine NOT LIKE '%View' ORDER BY name", func(row []byte) error {
		var r struct{ Name string }
		if err := json.Unmarshal(row, &r); err != nil {
			return err
		}
		tables = append(tables, r.Name)
		return nil
	})
	if err != nil {
		return fmt.Errorf("ledgertest: list tables: %w", err)
	}
	for _, table := range tables {
		if err := eng.QueryJSON(ctx, "SELECT * FROM `"+table+"`", func(row []byte) error { return fn(table, row) }); err != nil {
			return fmt.Errorf("ledgertest: read %s: %w", table, err)
		}
	}
	return nil
}
