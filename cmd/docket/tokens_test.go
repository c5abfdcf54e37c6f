package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ui/auth"
)

// runTokens runs "docket ui tokens ARGS…" and returns its standard output.
func runTokens(ctx context.Context, args ...string) (string, error) {
	cmd := tokensCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

// TestTokenChangesFromTheCommandLineAreOnRecord: a token made or revoked
// with the data directory in hand goes on the access log of every tenant
// it grants, under the operator's name, as one made in the UI does.
func TestTokenChangesFromTheCommandLineAreOnRecord(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	dir := t.TempDir()
	ctx := context.Background()
	// The test holds the engine open; the command shares it, as the
	// embedded engine allows one directory per process.
	store, err := storageconfig.Open(ctx, storageconfig.Config{Embedded: &storageconfig.EmbeddedConfig{Path: filepath.Join(dir, "ledger")}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { store.Engine().Close() }()

	secret, err := runTokens(ctx, "create", "ticket-bot", "--data", dir, "--actor", "ines", "--grant", "acme=auditor", "--grant", "globex=viewer")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "dkt_") {
		t.Fatalf("create printed %q, want the token", secret)
	}
	id := strings.SplitN(strings.TrimPrefix(strings.TrimSpace(secret), "dkt_"), "_", 2)[0]
	if _, err = runTokens(ctx, "revoke", id, "--data", dir, "--actor", "ines"); err != nil {
		t.Fatal(err)
	}

	var got []string
	for _, action := range []string{access.ActionTokenCreate, access.ActionTokenRevoke} {
		entries, err := store.AccessLog(ctx, ledgerstore.AccessFilter{Action: action})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.Actor != "ines" || e.Outcome != access.OutcomeAllowed || !strings.Contains(e.Detail, id) || strings.Contains(e.Detail, secret[len("dkt_")+len(id)+1:]) {
				t.Errorf("entry %+v: want ines, allowed, naming token %s and never its secret", e, id)
			}
			got = append(got, e.Action+"/"+e.Tenant)
		}
	}
	slices.Sort(got)
	if want := "token_create/acme,token_create/globex,token_revoke/acme,token_revoke/globex"; strings.Join(got, ",") != want {
		t.Fatalf("access log %v, want %s", got, want)
	}
}

// TestRevocationFromTheCommandLineDoesNotWaitForTheLedger: a leaked token
// is revoked even when the ledger cannot be opened (a running collector
// holds it), and the command says loudly that the revocation is not on
// record; a token is never created off the record.
func TestRevocationFromTheCommandLineDoesNotWaitForTheLedger(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// A file where the ledger's directory should be: it cannot be opened.
	if err := os.WriteFile(filepath.Join(dir, "ledger"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.OpenTokens(auth.TokensFileFor(usersFile(localFlags{storage: storageFlags{dataDir: dir}})))
	if err != nil {
		t.Fatal(err)
	}
	_, tok, err := tokens.Create("leaked-bot", auth.Grants{"acme": access.RoleViewer}, "setup", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}

	_, err = runTokens(ctx, "revoke", tok.ID, "--data", dir, "--actor", "ines")
	if err == nil || !strings.Contains(err.Error(), "NOT on the access log") {
		t.Fatalf("revoke with the ledger unopenable: err %v, want it to say the revocation is not on record", err)
	}
	got, _, err := tokens.Lookup(tok.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.RevokedAt == nil || got.RevokedBy != "ines" {
		t.Fatalf("token after revoke: %+v, want revoked by ines", got)
	}

	if _, err = runTokens(ctx, "create", "new-bot", "--data", dir, "--actor", "ines", "--grant", "acme=viewer"); err == nil {
		t.Fatal("a token was created with the ledger unopenable: its creation is on no record")
	}
	if list, err := tokens.List(); err != nil || len(list) != 1 {
		t.Fatalf("tokens after a refused create: %d (%v), want only the revoked one", len(list), err)
	}
}
