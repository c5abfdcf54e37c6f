package clickhouse

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// The adapter's behaviour against an engine is checked by the conformance
// suite (ledger/storage/storagetest), on chDB through an HTTP front and on a
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

// On a cluster every request carries the settings that make an
// acknowledged insert durable on the shard's replicas.
func TestClusterSettings(t *testing.T) {
	var got []url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Query())
	}))
	defer srv.Close()
	e, err := Open(context.Background(), "http://u:p@"+srv.Listener.Addr().String()+"/docket", Options{Cluster: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Insert(context.Background(), "INSERT INTO t", "RowBinary", []byte{1}); err != nil {
		t.Fatal(err)
	}
	for _, q := range got {
		if q.Get("distributed_foreground_insert") != "1" || q.Get("insert_quorum") != "auto" || q.Get("database") != "docket" {
			t.Fatalf("request without the cluster settings: %v", q)
		}
	}
	if len(got) != 2 || got[1].Get("query") != "INSERT INTO t FORMAT RowBinary" {
		t.Fatalf("requests %v", got)
	}
}

// A response cut after some rows, or ending in a partial row, is an error
// (the conformance suite covers the exception written as text).
func TestCutResponseIsAnError(t *testing.T) {
	for name, body := range map[string]string{"cut": "{\"n\":1}\n{\"n\":2}\n", "partial row": "{\"n\":1}\n{\"n\":"} {
		cut := name == "cut"
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("default_format") == "" {
				return // ping
			}
			_, _ = w.Write([]byte(body))
			if cut {
				_ = http.NewResponseController(w).Flush()
				panic(http.ErrAbortHandler)
			}
		}))
		e, err := Open(context.Background(), "http://u:p@"+srv.Listener.Addr().String()+"/docket", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var rows int
		err = e.QueryJSON(context.Background(), "SELECT n", func([]byte) error { rows++; return nil })
		if err == nil {
			t.Errorf("%s: %d rows and no error", name, rows)
		}
		srv.Close()
	}
}
