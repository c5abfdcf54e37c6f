package contentstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// dirBackend stores objects as files under a root directory:
// <root>/<tenant>/<kind>/<first two digest digits>/<digest>, written to a
// temporary file and linked into place so that a reader never sees a partial
// object. A legal hold is a marker file <object>.hold next to the object;
// remove refuses while it exists. One process should own a directory.
type dirBackend struct {
	root, tmp string
	fsync     bool
}

const holdSuffix = ".hold"

func openDir(path string, fsync bool) (*dirBackend, error) {
	root, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("contentstore: directory %q: %w", path, err)
	}
	tmp := filepath.Join(root, ".tmp")
	// Temporary files left by a crash were never linked: they are not
	// objects and nothing refers to them.
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("contentstore: clean directory: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("contentstore: create directory: %w", err)
	}
	return &dirBackend{root: root, tmp: tmp, fsync: fsync}, nil
}

func (d *dirBackend) path(key string) string {
	parts := strings.SplitN(key, "/", 3)
	digest := parts[2]
	return filepath.Join(d.root, parts[0], parts[1], digest[:2], digest)
}

func (d *dirBackend) put(_ context.Context, key string, data []byte) error {
	p := d.path(key)
	f, err := os.CreateTemp(d.tmp, "put-*")
	if err != nil {
		return fmt.Errorf("contentstore: write object: %w", err)
	}
	defer func() { _ = os.Remove(f.Name()) }()
	_, err = f.Write(data)
	if err == nil && d.fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o400)
	}
	if err != nil {
		return fmt.Errorf("contentstore: write object: %w", err)
	}
	// Link, unlike rename, never replaces an object that is already there.
	err = os.Link(f.Name(), p)
	if errors.Is(err, fs.ErrNotExist) { // first object of its directory
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			err = os.Link(f.Name(), p)
		}
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("contentstore: write object: %w", err)
	}
	if d.fsync {
		return syncDir(filepath.Dir(p))
	}
	return nil
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("contentstore: sync directory: %w", err)
	}
	defer func() { _ = f.Close() }()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("contentstore: sync directory: %w", err)
	}
	return nil
}

func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	}
	return err
}

func (d *dirBackend) get(_ context.Context, key string) ([]byte, error) {
	p := d.path(key)
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("contentstore: read object: %w", notFound(err))
	}
	if fi.Size() > maxReadBytes {
		return nil, fmt.Errorf("contentstore: read object: %d bytes is more than a read may return", fi.Size())
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("contentstore: read object: %w", notFound(err))
	}
	return b, nil
}

func (d *dirBackend) stat(_ context.Context, key string) (objectStat, error) {
	fi, err := os.Stat(d.path(key))
	if err != nil {
		return objectStat{}, fmt.Errorf("contentstore: stat object: %w", notFound(err))
	}
	return objectStat{size: fi.Size(), modified: fi.ModTime()}, nil
}

func (d *dirBackend) remove(_ context.Context, key string) (int64, error) {
	p := d.path(key)
	if _, err := os.Stat(p + holdSuffix); err == nil {
		return 0, ErrLegalHold
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0, fmt.Errorf("contentstore: delete object: %w", notFound(err))
	}
	if err := os.Remove(p); err != nil {
		return 0, fmt.Errorf("contentstore: delete object: %w", notFound(err))
	}
	return fi.Size(), nil
}

func (d *dirBackend) setHold(_ context.Context, key string, on bool) error {
	p := d.path(key)
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("contentstore: legal hold: %w", notFound(err))
	}
	if on {
		f, err := os.OpenFile(p+holdSuffix, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o400)
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("contentstore: legal hold: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("contentstore: legal hold: %w", err)
		}
		if d.fsync {
			return syncDir(filepath.Dir(p))
		}
		return nil
	}
	if err := os.Remove(p + holdSuffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("contentstore: release legal hold: %w", err)
	}
	return nil
}

func (d *dirBackend) hold(_ context.Context, key string) (bool, error) {
	p := d.path(key)
	if _, err := os.Stat(p); err != nil {
		return false, fmt.Errorf("contentstore: legal hold: %w", notFound(err))
	}
	_, err := os.Stat(p + holdSuffix)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("contentstore: legal hold: %w", err)
}

// list calls fn for every object file under a key prefix ("", "<tenant>/"
// or "<tenant>/<kind>/").
func (d *dirBackend) list(ctx context.Context, prefix string, fn func(key string, st objectStat) error) error {
	top := filepath.Join(d.root, filepath.FromSlash(prefix))
	err := filepath.WalkDir(top, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == top && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		if e.IsDir() {
			if p == d.tmp {
				return filepath.SkipDir
			}
			return ctx.Err()
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 4 || strings.HasSuffix(p, holdSuffix) || !strings.HasPrefix(parts[3], parts[2]) {
			return nil
		}
		fi, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // deleted while listing
		}
		if err != nil {
			return err
		}
		return fn(parts[0]+"/"+parts[1]+"/"+parts[3], objectStat{size: fi.Size(), modified: fi.ModTime()})
	})
	if err != nil {
		return fmt.Errorf("contentstore: list directory: %w", err)
	}
	return nil
}

func (d *dirBackend) usage(ctx context.Context, fn func(key string, size int64)) error {
	return d.list(ctx, "", func(key string, st objectStat) error {
		fn(key, st.size)
		return nil
	})
}

func (d *dirBackend) close() error { return nil }
