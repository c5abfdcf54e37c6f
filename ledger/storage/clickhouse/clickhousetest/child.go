package clickhousetest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketlabs/docket/ledger/storage/chdb"
)

// A ledger that several processes share, as gateways share a server, is
// served from a child process of the test binary: chDB opens one data
// directory per process, so the test process cannot hold it too.

// dsnLine starts the line on which the child announces its DSN.
const dsnLine = "dsn\t"

// ServeChild is the child's side: it serves the embedded ledger in dir,
// prints its DSN on stdout, and serves until its stdin is closed.
func ServeChild(dir string) error {
	eng, err := chdb.Open(dir)
	if err != nil {
		return fmt.Errorf("open the ledger to serve: %w", err)
	}
	defer func() { _ = eng.Close() }()
	front := New(eng)
	defer front.Close()
	fmt.Printf("%s%s\n", dsnLine, front.DSN)
	_, _ = io.Copy(io.Discard, os.Stdin)
	return nil
}

// StartChild starts cmd, a child that calls ServeChild, and returns the
// DSN it serves. The child stops at the test's cleanup; cleanups registered
// after this one (the ledger's users) run before it. Without a Stderr of
// the caller's, the child's is kept and shown if it does not start.
func StartChild(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	var stderr *os.File
	if cmd.Stderr == nil {
		f, err := os.Create(filepath.Join(t.TempDir(), "front.log"))
		if err != nil {
			t.Fatal(err)
		}
		stderr, cmd.Stderr = f, f
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err = cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
		if stderr != nil {
			_ = stderr.Close()
		}
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if dsn, ok := strings.CutPrefix(sc.Text(), dsnLine); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return dsn
		}
	}
	var log []byte
	if stderr != nil {
		log, _ = os.ReadFile(stderr.Name())
	}
	t.Fatalf("the ledger's front did not start: %v\n%s", sc.Err(), log)
	return ""
}
