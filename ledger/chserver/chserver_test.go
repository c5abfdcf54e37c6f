package chserver

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// The adapter's behaviour against an engine is checked by the conformance
// suite (ledger/engine/enginetest), on chDB through an HTTP front and on a
// live server when DOCKET_TEST_CLICKHOUSE_DSN is set.

func TestRefusesUnauthenticatedDSN(t *testing.T) {
	_, err := Open(context.Background(), "https://default@127.0.0.1:1/docket", Options{})
	if !errors.Is(err, ErrUnauthenticated) {
		t.Fatalf("got %v, want ErrUnauthenticated", err)
	}
}

func TestInvalidDSNDoesNotEchoSecrets(t *testing.T) {
	for _, dsn := range []string{"https://u:s3cret-pw@[::1:bad/", "clickhouse://u:s3cret-pw@host:9440/docket", "https://u:s3cret-pw@host:8443/docket?secure=true",
		"https://u:s3cret-pw@127.0.0.1:1/docket"} {
		_, err := Open(context.Background(), dsn, Options{})
		if err == nil || strings.Contains(err.Error(), "s3cret-pw") {
			t.Errorf("%s: got %v", strings.ReplaceAll(dsn, "s3cret-pw", "…"), err)
		}
	}
}
