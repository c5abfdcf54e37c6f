package chdb

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// connectError says why chDB could not open dir. The library only says
// that it failed, so the likely causes are checked in turn rather than
// guessed: another process blamed for a read-only or unwritable directory
// sends the operator after the wrong problem.
func connectError(dir string) error {
	f, err := os.CreateTemp(dir, ".docket-write-check-*")
	if err != nil {
		return fmt.Errorf("chdb: cannot open %q: the directory is not writable: %w", dir, err)
	}
	name := f.Name()
	_ = f.Close()
	_ = os.Remove(name)
	if Held(dir) {
		return fmt.Errorf("chdb: cannot open %q: another process holds it (chDB allows one process per data directory)", dir)
	}
	return fmt.Errorf("chdb: chDB could not open %q (its own reason is on standard error)", dir)
}

// Held reports whether another process has dir open: ClickHouse holds an
// exclusive flock on <dir>/status while it runs.
func Held(dir string) bool {
	lf, err := os.OpenFile(filepath.Join(dir, "status"), os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer func() { _ = lf.Close() }()
	err = syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(lf.Fd()), syscall.LOCK_UN)
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}
