package contentstore

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// erase removes n bytes at off from f: it punches a hole (the filesystem
// frees the blocks; reads return zeros), or where the filesystem cannot,
// overwrites them with zeros.
func erase(f *os.File, off, n int64) error {
	if n == 0 {
		return nil
	}
	err := unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return zero(f, off, n)
	}
	return err
}

// lockDir takes the directory d for this process: a second process
// appending to the same segments, or cutting the tail of one being
// written, would lose objects. The lock goes with the process.
func lockDir(d *os.File) error {
	err := unix.Flock(int(d.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return errors.New("is in use by another process (one process owns a content store directory)")
	}
	return err
}
