package storageconfig_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/storage/clickhouse/clickhousetest"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// A server configuration opens the adapter and migrates through it: here
// against chDB behind the HTTP front.
func TestOpenServer(t *testing.T) {
	ctx := context.Background()
	eng := ledgertest.Engine(t)
	front := clickhousetest.New(eng)
	defer front.Close()
	store, err := storageconfig.Open(ctx, storageconfig.Config{ClickHouse: &storageconfig.ClickHouseConfig{DSN: configopaque.String(front.DSN)}})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Engine().Close()
	if c, err := store.CountCalls(ctx); err != nil || c.Calls != 0 {
		t.Fatalf("counts %+v %v", c, err)
	}
	var ddl int
	for _, r := range front.Requests() {
		if r.Format == "" && r.BodyBytes == 0 {
			ddl++
		}
	}
	if ddl < 30 {
		t.Fatalf("%d statements reached the engine; the migrations did not run through the adapter", ddl)
	}
}

// A ledger reached through the shared, reopening engine (the ledgerstorage
// extension's) keeps what its configuration gives: the cluster's form of
// the lifecycle's deletes, and a server's file transfers for the audit
// export.
func TestReopeningKeepsTheServersWays(t *testing.T) {
	ctx := context.Background()
	// Never opened (nothing listens): the schema comes from the configuration.
	down := storageconfig.OpenReopening(ctx, storageconfig.Config{ClickHouse: &storageconfig.ClickHouseConfig{
		DSN: "http://docket:secret@127.0.0.1:1/default", Cluster: "docket"}}, time.Hour)
	q, err := down.Store().Statement("lifecycle_expire_calls")
	if err != nil || !strings.Contains(q, "DELETE FROM llm_calls_local ON CLUSTER docket") {
		t.Fatalf("delete through a cluster's reopening ledger: %v\n%s", err, q)
	}

	eng := ledgertest.Engine(t)
	if _, ok := storage.FilesOf(eng); ok {
		t.Fatal("the embedded engine claims a server's file transfers")
	}
	front := clickhousetest.New(eng)
	defer front.Close()
	up := storageconfig.OpenReopening(ctx, storageconfig.Config{ClickHouse: &storageconfig.ClickHouseConfig{DSN: configopaque.String(front.DSN)}}, time.Hour)
	defer up.Close()
	if _, ok := storage.FilesOf(up.Store().Engine()); !ok {
		t.Fatal("a server's reopening ledger hides the server's file transfers: the Parquet export would ask it for INTO OUTFILE")
	}
}
