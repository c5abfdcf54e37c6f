// Package proctest builds the project's commands and finds free ports for
// end-to-end tests that run them as subprocesses, and measures the CPU time
// of the process it runs in.
package proctest

import (
	"fmt"
	"net"
	"os/exec"
	"path"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// SelfCPU is the user and system CPU time of this process so far: what a
// benchmark reports beside wall time when its work runs on threads of its
// own (an embedded engine, file syncs) on a shared machine.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Build compiles the command pkg (an import path) into a temporary
// directory and returns the binary's path.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	bin, err := BuildIn(t.TempDir(), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildIn compiles the command pkg into dir, for a binary that outlives
// one test (the caller removes dir).
func BuildIn(dir, pkg string) (string, error) {
	bin := filepath.Join(dir, path.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}
