package contentstore

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/docketlabs/docket/internal/atomicfile"
)

// MinSecretLen is the shortest deployment secret accepted, in bytes.
const MinSecretLen = 32

// LoadOrCreateSecret reads the deployment secret from path, creating it
// (32 random bytes, hex, mode 0600) if the file does not exist. Creation is
// atomic: concurrent callers, in this process or another, all end up with
// the one secret that was written first.
func LoadOrCreateSecret(path string) ([]byte, error) {
	secret, err := readSecret(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return secret, err
	}
	if err = os.MkdirAll(filepath.Dir(path), 0o700); err != nil { //nolint:gosec // G703: the path is the operator's secret_file setting
		return nil, fmt.Errorf("contentstore: create secret directory: %w", err)
	}
	raw := make([]byte, 32)
	if _, err = rand.Read(raw); err != nil {
		return nil, fmt.Errorf("contentstore: generate secret: %w", err)
	}
	// Create never replaces an existing file: the first writer wins.
	err = atomicfile.Create(path, 0o600, func(w io.Writer) error {
		_, werr := io.WriteString(w, hex.EncodeToString(raw)+"\n")
		return werr
	})
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("contentstore: install secret: %w", err)
	}
	return readSecret(path)
}

func readSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G703: the path is the operator's secret_file setting
	if err != nil {
		return nil, fmt.Errorf("contentstore: read secret file: %w", err)
	}
	b = bytes.TrimSpace(b)
	if len(b) < MinSecretLen {
		return nil, fmt.Errorf("contentstore: secret file %s holds fewer than %d bytes", path, MinSecretLen)
	}
	return b, nil
}

// keyer computes object addresses: HMAC-SHA256 under a per-tenant key
// derived from the deployment secret, over the kind and the canonical
// content. Without the secret nobody can tell which content a digest
// stands for, not even by hashing a short guess; the same content of two
// tenants has unrelated digests.
type keyer struct {
	secret []byte
	mu     sync.Mutex
	keys   map[string][]byte // derived tenant keys
}

// maxCachedTenantKeys bounds the tenant key cache; past it the cache starts
// over, which only costs one extra HMAC per tenant.
const maxCachedTenantKeys = 4096

func newKeyer(secret []byte) *keyer {
	return &keyer{secret: bytes.Clone(secret), keys: map[string][]byte{}}
}

func (k *keyer) tenantKey(tenant string) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	if key, ok := k.keys[tenant]; ok {
		return key
	}
	m := hmac.New(sha256.New, k.secret)
	m.Write([]byte("docket-content/v1/tenant\x00"))
	m.Write([]byte(tenant))
	key := m.Sum(nil)
	if len(k.keys) >= maxCachedTenantKeys {
		clear(k.keys)
	}
	k.keys[tenant] = key
	return key
}

func (k *keyer) digest(tenant, kind string, canonical []byte) string {
	m := hmac.New(sha256.New, k.tenantKey(tenant))
	m.Write([]byte(kind))
	m.Write([]byte{0})
	m.Write(canonical)
	return hex.EncodeToString(m.Sum(nil))
}
