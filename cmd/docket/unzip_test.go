package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketlabs/docket/ledger/audit"
)

// A server's bundle is checked against its manifest while it is unpacked:
// names it does not list, a second copy of a name and an entry that inflates
// past its listed size are refused.
func TestUnzipBundleRefusesWhatTheManifestDoesNotList(t *testing.T) {
	table := []byte("a,b\n1,2\n")
	sum := sha256.Sum256(table)
	m := audit.Manifest{Files: []audit.File{{Name: "llm_calls.csv", Bytes: int64(len(table)), SHA256: hex.EncodeToString(sum[:])}}}
	type entry struct{ name, body string }
	for _, tc := range []struct {
		name    string
		entries []entry
		want    string
	}{
		{"as listed", []entry{{audit.ManifestName, "{}"}, {"llm_calls.csv", string(table)}}, ""},
		{"unlisted file", []entry{{"llm_calls.csv", string(table)}, {"extra.csv", "x"}}, "unexpected entry"},
		{"path", []entry{{"../llm_calls.csv", string(table)}}, "unexpected entry"},
		{"twice", []entry{{"llm_calls.csv", string(table)}, {"llm_calls.csv", string(table)}}, "unexpected entry"},
		{"inflates", []entry{{"llm_calls.csv", string(table) + strings.Repeat("0", 1<<20)}}, "larger than"},
		{"altered", []entry{{"llm_calls.csv", "a,b\n1,3\n"}}, "SHA-256"},
		{"missing", []entry{{audit.ManifestName, "{}"}}, "not in the download"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			zw := zip.NewWriter(&buf)
			for _, e := range tc.entries {
				w, err := zw.Create(e.name)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.Write([]byte(e.body)); err != nil {
					t.Fatal(err)
				}
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			f, err := os.Create(filepath.Join(dir, "bundle.zip"))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = f.Close() }()
			if _, err := f.Write(buf.Bytes()); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "out")
			if err := os.Mkdir(out, 0o700); err != nil {
				t.Fatal(err)
			}
			err = unzipBundle(f, int64(buf.Len()), out, m)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused a bundle as listed: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
