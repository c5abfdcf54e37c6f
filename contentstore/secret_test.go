package contentstore

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestSecretIsGeneratedOncePersistedAndPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "content.secret")
	const n = 8
	secrets := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			s, err := LoadOrCreateSecret(path)
			if err != nil {
				t.Error(err)
			}
			secrets[i] = s
		})
	}
	wg.Wait()
	for _, s := range secrets[1:] {
		if !bytes.Equal(s, secrets[0]) {
			t.Fatal("concurrent first starts produced different secrets")
		}
	}
	if len(secrets[0]) < MinSecretLen {
		t.Fatalf("secret of %d bytes", len(secrets[0]))
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("secret file mode %v, %v; want 0600", fi.Mode().Perm(), err)
	}
	again, err := LoadOrCreateSecret(path)
	if err != nil || !bytes.Equal(again, secrets[0]) {
		t.Fatal("secret not persisted across loads")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("temporary files left next to the secret: %d entries", len(entries))
	}
}

func TestShortSecretFileRejected(t *testing.T) {
	path := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(path, []byte("too short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateSecret(path); err == nil {
		t.Fatal("short secret accepted")
	}
}
