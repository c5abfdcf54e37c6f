//go:build !linux

package contentstore

import "os"

// erase overwrites n bytes at off in f with zeros.
func erase(f *os.File, off, n int64) error { return zero(f, off, n) }
