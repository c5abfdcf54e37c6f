// Package proctest builds the project's commands and finds free ports for
// end-to-end tests that run them as subprocesses, and measures the CPU time
// of the process it runs in.
package proctest

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
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

// FreePort returns a loopback TCP port that was free a moment ago, for a
// subprocess to listen on. A port the kernel picks for ":0" lies in its
// ephemeral range, where any outgoing connection of a concurrently running
// test (S3, gRPC) may take it as its source port before the subprocess
// binds it ("address already in use"). So the port is drawn at random from
// below that range, and never handed out twice by one test binary.
func FreePort(t testing.TB) string {
	t.Helper()
	lo, hi := portPool()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		port := lo + rand.IntN(hi-lo)
		if portsGiven[port] {
			continue
		}
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue
		}
		_ = ln.Close()
		portsGiven[port] = true
		return strconv.Itoa(port)
	}
	t.Fatalf("no free loopback port in [%d, %d)", lo, hi)
	return ""
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// portPool is the range FreePort draws from: from 10000 up to the start of
// the kernel's ephemeral range (32768 when it cannot be read).
func portPool() (lo, hi int) {
	lo, hi = 10000, 32768
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	if f := strings.Fields(string(b)); len(f) == 2 {
		if start, err := strconv.Atoi(f[0]); err == nil && start > lo+1000 {
			hi = start
		}
	}
	return lo, hi
}
