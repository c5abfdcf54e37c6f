package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"

	"github.com/docketlabs/docket/contentstore/contentstoretest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/storageconfig"
)

// runCommand runs cmd with args and returns what it printed.
func runCommand(ctx context.Context, cmd *cobra.Command, args ...string) (string, error) {
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// openDataLedger opens the embedded ledger of the data directory dir and
// closes it when the test ends. The test holds the engine open; a command
// run in the test shares it, as the embedded engine allows one directory
// per process.
func openDataLedger(t *testing.T, dir string) *ledgerstore.Store {
	t.Helper()
	store, err := storageconfig.Open(context.Background(), storageconfig.Config{Embedded: &storageconfig.EmbeddedConfig{Path: filepath.Join(dir, "ledger")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Engine().Close() })
	return store
}

// storeCall stores a user message holding input for a call of tenant acme
// in trace and writes the call's ledger row; it returns the row.
func storeCall(t *testing.T, d *localData, trace, input string) ledger.Call {
	t.Helper()
	ctx := context.Background()
	put, err := d.content.Put(ctx, "acme", "input", contentstoretest.Messages("user", input))
	if err != nil {
		t.Fatal(err)
	}
	call := ledgertest.Call("acme", trace, "b7ad6b7169203331")
	call.InputRef, call.ContentStatus = put.Ref.String(), "stored"
	if err := d.ledger.InsertCalls(ctx, []ledger.Call{call}); err != nil {
		t.Fatal(err)
	}
	return call
}
