// Package atomicfile writes files that must never be seen half-written (the
// users file, password files, manifests, generated tables): a reader, or the
// next start after a crash or a full disk, finds either the old content or
// the new one.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFile replaces path with data, created with mode perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write replaces path with what fill writes, created with mode perm: a
// temporary file in the same directory (so the rename stays on one file
// system) is written, synced, renamed over path, and the directory synced
// so that the rename itself survives a crash. When fill or any step fails,
// the temporary file is removed and path is left as it was.
func Write(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	return write(path, perm, fill, os.Rename)
}

// Create is Write for a file that is never replaced: when path already
// exists, Create leaves it and returns an error that matches fs.ErrExist.
// Concurrent creators, in this process or another, end with the content of
// the first one.
func Create(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	return write(path, perm, fill, os.Link)
}

func write(path string, perm fs.FileMode, fill func(io.Writer) error, install func(tmp, path string) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	defer func() {
		// After a rename the name is gone; after a link it is a second
		// name; after a failure it is the only trace left. All go.
		if rerr := os.Remove(tmp.Name()); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
			err = fmt.Errorf("atomicfile: remove temporary file: %w", rerr)
		}
	}()
	// CreateTemp makes the file 0600; perm applies whatever the umask.
	err = tmp.Chmod(perm)
	if err == nil {
		err = fill(tmp)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", path, err)
	}
	if err := install(tmp.Name(), path); err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("atomicfile: sync directory %s: %w", dir, err)
	}
	return nil
}
