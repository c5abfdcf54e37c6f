// Package gentest helps tests keep a shipped, generated data file in step
// with its generator.
package gentest

import (
	"bufio"
	"bytes"
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

// Config is a converter's parsed command line.
type Config interface {
	// Output is the file the converter writes, relative to where it runs.
	Output() string
}

// Current runs a converter as `go generate` in pkgDir does — in that
// directory, on its go:generate line's arguments, through the converter's
// own parse and generate — and fails t unless the output equals the shipped
// file. It returns the converter's report, for the test to check against
// the numbers the docs quote.
func Current[C Config, R any](t *testing.T, pkgDir string, parse func([]string) (C, error), generate func(C) ([]byte, R, error)) R {
	t.Helper()
	args := Args(t, pkgDir)
	pkg := modulePath(t, pkgDir)
	t.Chdir(pkgDir)
	cfg, err := parse(args)
	if err != nil {
		t.Fatal(err)
	}
	got, rep, err := generate(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(cfg.Output())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from a fresh conversion of its source: run go generate ./%s", cfg.Output(), pkg)
	}
	return rep
}

// modulePath is dir relative to the module root, as go generate names it.
func modulePath(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for root := abs; ; root = filepath.Dir(root) {
		if _, err := os.Stat(filepath.Join(root, "go.mod")); err == nil {
			rel, err := filepath.Rel(root, abs)
			if err != nil {
				t.Fatal(err)
			}
			return filepath.ToSlash(rel)
		}
		if filepath.Dir(root) == root {
			t.Fatalf("no go.mod above %s", abs)
		}
	}
}
