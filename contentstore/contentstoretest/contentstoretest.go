// Package contentstoretest opens content stores for tests: the one place a
// test's directory store is configured, so a change to the store's
// configuration is made once.
package contentstoretest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/config/configoptional"

	"github.com/docketlabs/docket/contentstore"
)

// DirConfig is the default configuration with a directory store at path.
func DirConfig(path string) contentstore.Config {
	cfg := contentstore.NewDefaultConfig()
	cfg.Directory = configoptional.Some(contentstore.DirConfig{Path: path})
	return cfg
}

// Open opens cfg and closes the store when the test ends.
func Open(t testing.TB, cfg contentstore.Config) contentstore.Store {
	t.Helper()
	st, err := contentstore.Open(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close content store: %v", err)
		}
	})
	return st
}

// Dir opens a directory store in a directory of the test's own.
func Dir(t testing.TB) contentstore.Store {
	t.Helper()
	return Open(t, DirConfig(filepath.Join(t.TempDir(), "content")))
}

// Messages is a GenAI message list of one text part, as the content-ref
// processor stores a prompt or an answer.
func Messages(role, text string) []byte {
	// Maps of strings always marshal.
	b, _ := json.Marshal([]map[string]any{{"role": role, "parts": []map[string]string{{"type": "text", "content": text}}}})
	return b
}

// Put stores content of tenant under kind and returns its reference.
func Put(t testing.TB, st contentstore.Store, tenant, kind string, content []byte) string {
	t.Helper()
	res, err := st.Put(context.Background(), tenant, kind, content)
	if err != nil {
		t.Fatal(err)
	}
	return res.Ref.String()
}
