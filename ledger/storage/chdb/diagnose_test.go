package chdb

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// readOnlyDir is a directory this process cannot write: a read-only
// tmpfs as root (root ignores permissions), a 0500 directory otherwise.
func readOnlyDir(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(dir, 0o500); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a read-only tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	return dir
}

// An unopenable directory is reported for what it is; only a held lock
// is blamed on another process.
func TestOpenErrorNamesTheCause(t *testing.T) {
	_, err := Open(readOnlyDir(t))
	if err == nil || !strings.Contains(err.Error(), "not writable") || strings.Contains(err.Error(), "another process") {
		t.Fatalf("read-only directory: %v", err)
	}

	dir := t.TempDir()
	lock, err := os.Create(filepath.Join(dir, "status"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	_, err = Open(dir)
	if err == nil || !strings.Contains(err.Error(), "another process holds it") {
		t.Fatalf("locked directory: %v", err)
	}
}
