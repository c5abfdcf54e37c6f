package storageconfig_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/docketlabs/docket/ledger/ledgertest"
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
