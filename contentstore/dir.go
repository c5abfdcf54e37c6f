package contentstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/docketlabs/docket/internal/groupcommit"
	"github.com/docketlabs/docket/internal/parallel"
)

// dirBackend stores objects under a root directory, in segments (see
// pack.go). Stores written before segments hold objects as files,
// <root>/<tenant>/<kind>/<first two digest digits>/<digest>, written to a
// temporary file and linked into place so that a reader never sees a partial
// object, with a legal hold as a marker file <object>.hold next to the
// object; those are still read, listed, held and deleted, and new objects
// go to segments. One process should own a directory.
type dirBackend struct {
	root, tmp string
	fsync     bool
	pack      *pack
	// legacy: the root holds entries other than the backend's own
	// directories, so objects may be files; otherwise no file is looked for.
	legacy bool
	// files writes new objects as files, as stores did before segments
	// (tests build such stores with it).
	files bool
	seq   atomic.Int64 // names temporary files
	// syncs is the group commit of the store: the commits of concurrent
	// batches wait while a sync round runs, then the next round syncs all
	// of them at once, each directory once however many batches touched it.
	syncs groupcommit.Committer[*syncJob]
	// durableDirs holds the object directories whose parents this
	// process has synced.
	durableDirs sync.Map
	// rootFile is the root directory, open from the start when syncing: a
	// round's syncfs goes through it (syncWhole).
	rootFile *os.File
}

const holdSuffix = ".hold"

func openDir(path string, fsync bool, logger *zap.Logger) (*dirBackend, error) {
	return openDirLayout(path, fsync, false, logger)
}

func openDirLayout(path string, fsync, files bool, logger *zap.Logger) (*dirBackend, error) {
	root, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("contentstore: directory %q: %w", path, err)
	}
	tmp := filepath.Join(root, ".tmp")
	// Temporary files left by a crash were never linked: they are not
	// objects and nothing refers to them.
	if err = os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("contentstore: clean directory: %w", err)
	}
	if err = os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("contentstore: create directory: %w", err)
	}
	d := &dirBackend{root: root, tmp: tmp, fsync: fsync, files: files, legacy: files}
	if fsync {
		if d.rootFile, err = os.Open(root); err != nil {
			return nil, fmt.Errorf("contentstore: open directory: %w", err)
		}
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		_ = d.close()
		return nil, fmt.Errorf("contentstore: read directory: %w", err)
	}
	for _, e := range entries {
		if n := e.Name(); n != ".tmp" && n != segmentsDir {
			d.legacy = true
		}
	}
	if d.pack, err = openPack(root, fsync, d.syncFiles, logger); err != nil {
		_ = d.close()
		return nil, err
	}
	return d, nil
}

// syncFiles makes files and dirs durable in one sync round.
func (d *dirBackend) syncFiles(files []*os.File, dirs []string) error {
	job := &syncJob{files: files, fileErrs: make([]error, len(files)), dirs: map[string]error{}}
	for _, dir := range dirs {
		job.dirs[dir] = nil
	}
	d.syncRound([]*syncJob{job})
	errs := job.fileErrs
	for _, err := range job.dirs {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (d *dirBackend) path(key string) string {
	parts := strings.SplitN(key, "/", 3)
	digest := parts[2]
	return filepath.Join(d.root, parts[0], parts[1], digest[:2], digest)
}

// putBatch is a group commit in one sync round: new objects are appended
// to a segment (pack.round). Objects written as files (by stores before
// segments, or by a store with files set) are a group commit of their own
// kind: each new object is written to a temporary file and linked into place (link, unlike rename,
// never replaces an object already there); then, all at once, every file is
// synced and every directory the batch touched is synced once, so that the
// filesystem commits them together. Until the round ends an object may be
// linked but not durable, and a crash can leave it short or empty; no
// reference to it was handed out, since its batch never returned, and an
// object found already there is checked against the content before it is
// trusted, and synced again in case whoever linked it died first.
func (d *dirBackend) putBatch(_ context.Context, objs []*batchObject) {
	var packed []*batchObject
	if !d.files {
		// New objects go to segments; an object found as a file is checked
		// (and repaired) where it is.
		var asFiles []*batchObject
		for _, o := range objs {
			if _, ok := d.pack.lookup(o.key); o.exists && d.legacy && !ok {
				asFiles = append(asFiles, o)
			} else {
				packed = append(packed, o)
			}
		}
		objs = asFiles
	}
	if len(packed) > 0 {
		d.pack.put(packed)
	}
	for len(objs) > 0 {
		n := min(len(objs), maxOpenFiles)
		d.commit(objs[:n])
		objs = objs[n:]
	}
}

// maxOpenFiles bounds the files one commit keeps open until they are
// synced.
const maxOpenFiles = 256

func (d *dirBackend) commit(objs []*batchObject) {
	files := make([]*os.File, len(objs))
	// Writing is CPU work (no sync yet): more writers than CPUs would only
	// contend for the directories' locks.
	parallel.For(len(objs), runtime.GOMAXPROCS(0), func(i int) {
		files[i], objs[i].created, objs[i].err = d.place(d.path(objs[i].key), objs[i])
	})
	defer func() {
		for _, f := range files {
			if f != nil {
				_ = f.Close()
			}
		}
	}()
	if !d.fsync {
		return
	}
	job := &syncJob{files: files, fileErrs: make([]error, len(files)), dirs: map[string]error{}}
	objDirs := make([][]string, len(objs))
	var leaves []string
	for i, o := range objs {
		if o.err != nil {
			continue
		}
		dir := filepath.Dir(d.path(o.key))
		objDirs[i] = append(objDirs[i], dir)
		// A directory is durable only once its parents are. Whichever
		// batch made it, the first batch of this process to use it syncs
		// them, so none returns before they are.
		if _, ok := d.durableDirs.Load(dir); !ok {
			leaves = append(leaves, dir)
			for p := dir; p != d.root; {
				p = filepath.Dir(p)
				objDirs[i] = append(objDirs[i], p)
			}
		}
		for _, dir := range objDirs[i] {
			job.dirs[dir] = nil
		}
	}
	d.syncs.Do(job, d.syncRound)
	for i, o := range objs {
		o.err = cmp.Or(o.err, job.fileErrs[i])
		for _, dir := range objDirs[i] {
			o.err = cmp.Or(o.err, job.dirs[dir])
		}
		if o.err != nil && o.created {
			// Not durable: not an object, and not counted.
			_ = os.Remove(d.path(o.key))
			o.created = false
		}
	}
	for _, dir := range leaves {
		if d.parentsSynced(dir, job.dirs) {
			d.durableDirs.Store(dir, struct{}{})
		}
	}
}

// parentsSynced reports whether dir and each of its parents up to the root
// were synced without error.
func (d *dirBackend) parentsSynced(dir string, errs map[string]error) bool {
	for p := dir; ; p = filepath.Dir(p) {
		if errs[p] != nil {
			return false
		}
		if p == d.root {
			return true
		}
	}
}

// syncJob is what one commit needs synced: its files and directories,
// with the error of each once synced.
type syncJob struct {
	files    []*os.File // nil entries are skipped
	fileErrs []error
	dirs     map[string]error
}

// syncRound syncs the files and directories of jobs: with one syncfs per
// filesystem where that makes all of them durable (syncWhole), else each
// of them, several at once, so that the filesystem commits them together.
func (d *dirBackend) syncRound(jobs []*syncJob) {
	type fileRef struct{ job, i int }
	var files []fileRef
	dirErrs := map[string]error{}
	for j, job := range jobs {
		for i, f := range job.files {
			if f != nil {
				files = append(files, fileRef{j, i})
			}
		}
		for dir := range job.dirs {
			dirErrs[dir] = nil
		}
	}
	dirs := slices.Collect(maps.Keys(dirErrs))
	open := make([]*os.File, len(files))
	for i, f := range files {
		open[i] = jobs[f.job].files[f.i]
	}
	errs := make([]error, len(files)+len(dirs))
	synced := syncWhole(d.rootFile, open, dirs, errs, syncfs)
	parallel.For(len(errs), batchWorkers, func(i int) {
		if synced[i] {
			return
		}
		if i >= len(files) {
			errs[i] = syncDir(dirs[i-len(files)])
			return
		}
		if err := open[i].Sync(); err != nil {
			errs[i] = fmt.Errorf("contentstore: write object: %w", err)
		}
	})
	for i, f := range files {
		jobs[f.job].fileErrs[f.i] = errs[i]
	}
	for i, dir := range dirs {
		dirErrs[dir] = errs[len(files)+i]
	}
	for _, job := range jobs {
		for dir := range job.dirs {
			job.dirs[dir] = dirErrs[dir]
		}
	}
}

// place puts one object's file at p, unless the object there holds the
// content already, and returns the file, open, to be synced.
func (d *dirBackend) place(p string, o *batchObject) (f *os.File, created bool, err error) {
	if o.exists {
		if f, err = verify(p, o.data); f != nil || err != nil {
			return f, false, err
		}
	}
	tmp := filepath.Join(d.tmp, "put-"+strconv.FormatInt(d.seq.Add(1), 10))
	f, err = os.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o400)
	if err != nil {
		return nil, false, fmt.Errorf("contentstore: write object: %w", err)
	}
	defer func() { _ = os.Remove(tmp) }()
	if _, err = f.Write(o.data); err == nil {
		err = os.Link(tmp, p)
		if errors.Is(err, fs.ErrNotExist) { // first object of its directory
			if err = os.MkdirAll(filepath.Dir(p), 0o700); err == nil {
				err = os.Link(tmp, p)
			}
		}
	}
	if errors.Is(err, fs.ErrExist) {
		// Left by a crash, or stored since the store looked: kept if it
		// holds the content, else replaced. Only the content of its own
		// address replaces it, so this repairs, never rewrites, an object
		// (a legal hold, a marker file beside it, stays).
		var old *os.File
		if old, err = verify(p, o.data); old != nil || err != nil {
			_ = f.Close()
			return old, false, err
		}
		err = os.Rename(tmp, p)
	}
	if err != nil {
		_ = f.Close()
		return nil, false, fmt.Errorf("contentstore: write object: %w", err)
	}
	return f, true, nil
}

// verify opens the object at p if it holds exactly data; nil if it does
// not or is gone.
func verify(p string, data []byte) (*os.File, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("contentstore: read object: %w", err)
	}
	fi, err := f.Stat()
	if err == nil && fi.Size() == int64(len(data)) {
		got := make([]byte, len(data))
		if _, err = io.ReadFull(f, got); err == nil && bytes.Equal(got, data) {
			return f, nil
		}
	}
	_ = f.Close()
	if err != nil {
		return nil, fmt.Errorf("contentstore: read object: %w", err)
	}
	return nil, nil
}

// batchWorkers bounds the syncs of one round and the S3 requests of one
// batch that run at once.
const batchWorkers = 16

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
	if e, ok := d.pack.lookup(key); ok {
		return d.pack.get(e, key)
	}
	if !d.legacy {
		return nil, fmt.Errorf("contentstore: read object: %w", ErrNotFound)
	}
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
	if e, ok := d.pack.lookup(key); ok {
		return objectStat{size: e.size, modified: time.Unix(0, e.stamp)}, nil
	}
	if !d.legacy {
		return objectStat{}, fmt.Errorf("contentstore: stat object: %w", ErrNotFound)
	}
	fi, err := os.Stat(d.path(key))
	if err != nil {
		return objectStat{}, fmt.Errorf("contentstore: stat object: %w", notFound(err))
	}
	return objectStat{size: fi.Size(), modified: fi.ModTime()}, nil
}

func (d *dirBackend) remove(_ context.Context, key string) (int64, error) {
	if e, ok := d.pack.lookup(key); ok {
		return d.pack.remove(e, key)
	}
	if !d.legacy {
		return 0, fmt.Errorf("contentstore: delete object: %w", ErrNotFound)
	}
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
	if e, ok := d.pack.lookup(key); ok {
		return d.pack.setHold(e, key, on)
	}
	if !d.legacy {
		return fmt.Errorf("contentstore: legal hold: %w", ErrNotFound)
	}
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
	if e, ok := d.pack.lookup(key); ok {
		return e.held, nil
	}
	if !d.legacy {
		return false, fmt.Errorf("contentstore: legal hold: %w", ErrNotFound)
	}
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

// list calls fn for every object under a key prefix ("", "<tenant>/" or
// "<tenant>/<kind>/"): those in segments, then those in files.
func (d *dirBackend) list(ctx context.Context, prefix string, fn func(key string, st objectStat) error) error {
	for _, o := range d.pack.objects(prefix) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(o.key, objectStat{size: o.size, modified: time.Unix(0, o.stamp)}); err != nil {
			return err
		}
	}
	if !d.legacy {
		return nil
	}
	return d.walk(ctx, prefix, fn)
}

// walk calls fn for every object file under a key prefix.
func (d *dirBackend) walk(ctx context.Context, prefix string, fn func(key string, st objectStat) error) error {
	top := filepath.Join(d.root, filepath.FromSlash(prefix))
	err := filepath.WalkDir(top, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if p == top && errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		if e.IsDir() {
			if p == d.tmp || p == d.pack.dir {
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
	d.pack.usage(fn)
	if !d.legacy {
		return nil
	}
	return d.walk(ctx, "", func(key string, st objectStat) error {
		fn(key, st.size)
		return nil
	})
}

func (d *dirBackend) close() error {
	if d.pack != nil {
		d.pack.close()
	}
	if d.rootFile == nil {
		return nil
	}
	if err := d.rootFile.Close(); !errors.Is(err, os.ErrClosed) {
		return err
	}
	return nil
}
