// Package gentest helps tests keep a shipped, generated data file in step
// with its generator.
package gentest

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Args returns the arguments of the `//go:generate go run ./internal/convert`
// line in pkgDir/doc.go, so a test and `go generate` cannot drift apart.
func Args(t *testing.T, pkgDir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(pkgDir, "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	const prefix = "//go:generate go run ./internal/convert "
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			return strings.Fields(rest)
		}
	}
	t.Fatal("no go:generate line for the converter in doc.go")
	return nil
}
