package contentstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// dirBackend stores objects as files under a root directory:
// <root>/<tenant>/<kind>/<first two digest digits>/<digest>, written to a
// temporary file and linked into place so that a reader never sees a partial
// object. A legal hold is a marker file <object>.hold next to the object;
// remove refuses while it exists. One process should own a directory.
type dirBackend struct {
	root, tmp string
	fsync     bool
	// durableDirs holds the object directories whose parents this
	// process has synced.
	durableDirs sync.Map
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

// putBatch is a group commit: every new object is written to a temporary
// file and synced, then linked into place; then every directory the batch
// touched is synced once. Link, unlike rename, never replaces an object
// that is already there. Files and directories are synced by several
// workers at once, so that the filesystem commits them together.
func (d *dirBackend) putBatch(_ context.Context, objs []*batchObject) {
	parallel(len(objs), func(i int) {
		if !objs[i].exists {
			objs[i].created, objs[i].err = d.write(d.path(objs[i].key), objs[i].data)
		}
	})
	if !d.fsync {
		return
	}
	dirs := map[string][]*batchObject{}
	var leaves []string
	for _, o := range objs {
		if o.err != nil {
			continue
		}
		dir := filepath.Dir(d.path(o.key))
		dirs[dir] = append(dirs[dir], o)
		// A directory is durable only once its parents are. Whichever
		// batch made it, the first batch of this process to use it syncs
		// them, so none returns before they are.
		if _, ok := d.durableDirs.Load(dir); !ok {
			leaves = append(leaves, dir)
			for p := dir; p != d.root; {
				p = filepath.Dir(p)
				dirs[p] = append(dirs[p], o)
			}
		}
	}
	list := make([]string, 0, len(dirs))
	for dir := range dirs {
		list = append(list, dir)
	}
	errs := make([]error, len(list))
	parallel(len(list), func(i int) { errs[i] = syncDir(list[i]) })
	for i, err := range errs {
		for _, o := range dirs[list[i]] {
			if err != nil && o.err == nil {
				o.err = err
			}
		}
	}
	if !slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		for _, dir := range leaves {
			d.durableDirs.Store(dir, struct{}{})
		}
	}
}

// write writes one object's file and links it at p. created is false when
// an object was already there.
func (d *dirBackend) write(p string, data []byte) (created bool, err error) {
	f, err := os.CreateTemp(d.tmp, "put-*")
	if err != nil {
		return false, fmt.Errorf("contentstore: write object: %w", err)
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
		return false, fmt.Errorf("contentstore: write object: %w", err)
	}
	err = os.Link(f.Name(), p)
	if errors.Is(err, fs.ErrNotExist) { // first object of its directory
		if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
			err = os.Link(f.Name(), p)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("contentstore: write object: %w", err)
	}
	return true, nil
}

// batchWorkers bounds the writes, syncs and S3 requests of one batch that
// run at once.
const batchWorkers = 16

// parallel runs fn for 0..n-1 on at most batchWorkers goroutines.
func parallel(n int, fn func(i int)) {
	if n == 1 {
		fn(0)
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(batchWorkers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		})
	}
	wg.Wait()
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
