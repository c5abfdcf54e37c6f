package auth

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneTimePasswordOffTheTerminal: with stderr not a terminal (a pipe,
// as under a service manager or a log shipper), the password goes to a
// 0600 file beside the users file and nothing is written to stderr.
func TestOneTimePasswordOffTheTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	users := filepath.Join(t.TempDir(), "users.json")
	// A leftover file with a looser mode is replaced, not reused.
	if err := os.WriteFile(OneTimePasswordFile(users), []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	password := GeneratePassword()
	file, err := DeliverOneTimePassword(w, users, password)
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if printed, _ := io.ReadAll(r); len(printed) > 0 {
		t.Fatalf("written to a non-terminal stderr: %q", printed)
	}
	info, err := os.Stat(file)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("password file %s: %v, mode %v; want 0600", file, err, info.Mode().Perm())
	}
	if raw, _ := os.ReadFile(file); !strings.Contains(string(raw), password) || strings.Contains(string(raw), "old") {
		t.Fatalf("password file holds %q", raw)
	}
}
