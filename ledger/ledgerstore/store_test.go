package ledgerstore

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/storage/chdb"
)

// One embedded engine per test process: chDB allows one data directory.
var testStore *Store

func TestMain(m *testing.M) {
	if shorttest.SkipPackage(shorttest.ChDB) {
		os.Exit(0)
	}
	if role := os.Getenv(childRole); role != "" {
		os.Exit(runChild(role))
	}
	dir, err := os.MkdirTemp("", "ledger-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	eng, err := chdb.Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testStore = New(eng)
	if err := testStore.Migrate(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	eng.Close()
	os.RemoveAll(dir)
	os.Exit(code)
}

func TestMigrateIsIdempotent(t *testing.T) {
	if err := testStore.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
}
