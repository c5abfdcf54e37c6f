package atomicfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/docketlabs/docket/internal/atomicfile"
)

func TestWriteFileReplacesWithMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.json")
	for _, c := range []struct {
		data string
		perm fs.FileMode
	}{{"old", 0o600}, {"new", 0o644}, {"newer", 0o600}} {
		if err := atomicfile.WriteFile(path, []byte(c.data), c.perm); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != c.data {
			t.Fatalf("content %q, %v; want %q", got, err, c.data)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != c.perm {
			t.Fatalf("mode %v, want %v", st.Mode().Perm(), c.perm)
		}
	}
	onlyFile(t, dir, "users.json")
}

func TestFailedFillLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "manifest.json")
	if err := atomicfile.WriteFile(path, []byte("old content"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := atomicfile.Write(path, 0o600, func(w io.Writer) error {
		if _, err := w.Write([]byte("half of the new")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want the fill's error", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old content" {
		t.Fatalf("after a failed write the file holds %q", got)
	}
	onlyFile(t, dir, "manifest.json")
}

// A write the file system refuses halfway (here: the file size limit, as a
// full disk would) leaves the old file whole. The write runs in a child
// process so that the limit does not reach the test binary.
func TestFullDiskMidWriteLeavesOldFile(t *testing.T) {
	if path := os.Getenv("ATOMICFILE_CHILD_PATH"); path != "" {
		limit := &syscall.Rlimit{Cur: 4096, Max: 4096}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, limit); err != nil {
			fmt.Println("setrlimit:", err)
			os.Exit(2)
		}
		err := atomicfile.WriteFile(path, bytes.Repeat([]byte("n"), 64<<10), 0o600)
		fmt.Println("write:", err)
		os.Exit(0)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "pricing.json")
	old := bytes.Repeat([]byte("o"), 1000)
	if err := atomicfile.WriteFile(path, old, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFullDiskMidWriteLeavesOldFile$")
	cmd.Env = append(os.Environ(), "ATOMICFILE_CHILD_PATH="+path)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "write: atomicfile:") || !strings.Contains(string(out), "file too large") {
		t.Fatalf("the child's write did not fail on the size limit:\n%s", out)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, old) {
		t.Fatalf("after a refused write the file holds %d bytes, want the old %d", len(got), len(old))
	}
	onlyFile(t, dir, "pricing.json")
}

func TestCreateKeepsTheFirst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "secret")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = atomicfile.Create(path, 0o600, func(w io.Writer) error {
				_, err := fmt.Fprintf(w, "writer %d", i)
				return err
			})
		})
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both created the file", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, fs.ErrExist):
			t.Fatalf("writer %d: %v, want fs.ErrExist", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer created the file")
	}
	if got, _ := os.ReadFile(path); string(got) != fmt.Sprintf("writer %d", winner) {
		t.Fatalf("file holds %q, want writer %d's content", got, winner)
	}
	onlyFile(t, dir, "secret")
}

func TestMissingDirectoryIsAnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "file")
	if err := atomicfile.WriteFile(path, []byte("x"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("err %v, want fs.ErrNotExist", err)
	}
}

// onlyFile fails unless dir holds just name: no temporary file is left.
func onlyFile(t *testing.T, dir, name string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if len(names) != 1 || names[0] != name {
		t.Fatalf("directory holds %v, want only %s", names, name)
	}
}
