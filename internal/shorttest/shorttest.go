// Package shorttest lets `go test -short` (`make test-unit`) run without
// what only `make test` installs: a test that needs one of those names it
// here and is skipped under -short with that reason.
package shorttest

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// What a test may need beyond Go and the module cache.
const (
	ChDB     = "the embedded chDB engine (libchdb)"
	S3       = "the versitygw S3 server"
	Chromium = "headless Chromium"
	Node     = "Node.js with the conformance npm packages"
)

// Needs skips t under -short, naming deps.
func Needs(t testing.TB, deps ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip(reason(deps))
	}
}

// SkipPackage, called from TestMain before anything is opened, reports
// whether the package's tests are to be skipped as a whole (under -short),
// saying why on stderr.
func SkipPackage(deps ...string) bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	if !testing.Short() {
		return false
	}
	fmt.Fprintln(os.Stderr, "every test of this package is skipped: "+reason(deps))
	return true
}

func reason(deps []string) string {
	return fmt.Sprintf("-short: needs %s; `make test` runs it", strings.Join(deps, " and "))
}
