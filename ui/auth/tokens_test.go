package auth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger/access"
)

func TestTokensFileKeepsHashesOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ui-tokens.json")
	tokens, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	secret, tok, err := tokens.Create("ci", Grants{"acme": access.RoleViewer}, "admin", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(path)
	if info.Mode().Perm() != 0o600 || strings.Contains(string(raw), strings.SplitN(secret, "_", 3)[2]) || !strings.Contains(string(raw), secretHash(strings.SplitN(secret, "_", 3)[2])) {
		t.Fatalf("tokens file (mode %v): %s", info.Mode().Perm(), raw)
	}
	got, err := tokens.Authenticate(secret, time.Now())
	if err != nil || got.ID != tok.ID || got.Principal() != "service:ci" || got.LastUsedAt == nil {
		t.Fatalf("authenticate: %+v %v", got, err)
	}
	for _, bad := range []string{secret + "x", secret[:len(secret)-1], strings.Replace(secret, "_", "-", 1), "", TokenPrefix} {
		if _, err := tokens.Authenticate(bad, time.Now()); !errors.Is(err, ErrBadToken) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := tokens.Authenticate(secret, tok.ExpiresAt); !errors.Is(err, ErrTokenExpired) {
		t.Errorf("at expiry: %v", err)
	}
}

// A revocation written by another process (the CLI) is never undone by
// the server's last-used update, which rereads the file under its lock.
func TestRevocationSurvivesLastUsedUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ui-tokens.json")
	server, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	secret, tok, err := cli.Create("ci", Grants{"acme": access.RoleViewer}, "admin", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := server.Authenticate(secret, now); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Revoke(tok.ID, "operator"); err != nil {
		t.Fatal(err)
	}
	// Same mtime resolution, a later use: the server must see the revocation.
	if _, err := server.Authenticate(secret, now.Add(2*lastUsedEvery)); !errors.Is(err, ErrTokenRevoked) {
		t.Fatalf("after revocation: %v", err)
	}
	again, err := OpenTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := again.Lookup(tok.ID); got.RevokedAt == nil || got.RevokedBy != "operator" {
		t.Fatalf("revocation lost: %+v", got)
	}
}
