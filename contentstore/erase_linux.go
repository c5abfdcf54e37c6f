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
