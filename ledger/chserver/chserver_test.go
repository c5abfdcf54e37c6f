package chserver

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/docketlabs/docket/ledger/engine"
)

func TestRefusesUnauthenticatedDSN(t *testing.T) {
	_, err := Open(context.Background(), "clickhouse://default@127.0.0.1:1/docket", false)
	if !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("got %v, want ErrUnauthenticated", err)
	}
}

func TestInvalidDSNDoesNotEchoSecrets(t *testing.T) {
	_, err := Open(context.Background(), "clickhouse://u:s3cret-pw@[::1:bad/", false)
	if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
		t.Fatalf("got %v", err)
	}
}

// TestServer runs the engine contract against a live ClickHouse server when
// DOCKET_TEST_CLICKHOUSE_DSN names one (none can be installed where this
// project's CI runs).
func TestServer(t *testing.T) {
	dsn := os.Getenv("DOCKET_TEST_CLICKHOUSE_DSN")
	if dsn == "" {
		t.Skip("DOCKET_TEST_CLICKHOUSE_DSN not set")
	}
	ctx := context.Background()
	e, err := Open(ctx, dsn, os.Getenv("DOCKET_TEST_CLICKHOUSE_ALLOW_UNAUTHENTICATED") == "1")
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Exec(ctx, "CREATE TABLE IF NOT EXISTS docket_engine_test (k String, n Nullable(Int64)) ENGINE = MergeTree ORDER BY k"); err != nil {
		t.Fatal(err)
	}
	defer e.Exec(ctx, "DROP TABLE docket_engine_test")
	if err := e.Exec(ctx, "INSERT INTO docket_engine_test FORMAT JSONEachRow\n{\"k\":\"a\",\"n\":null}\n{\"k\":\"b\",\"n\":2}"); err != nil {
		t.Fatal(err)
	}
	var rows []string
	err = e.QueryJSON(ctx, "SELECT k, n FROM docket_engine_test ORDER BY k", func(row []byte) error {
		rows = append(rows, string(row))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows, "|") != `{"k":"a","n":null}|{"k":"b","n":2}` {
		t.Fatalf("rows %q", rows)
	}
	var _ engine.Engine = e
}
