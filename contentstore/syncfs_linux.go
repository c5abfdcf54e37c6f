package contentstore

import (
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// Filesystems whose syncfs(2) makes everything written to them durable,
// data and metadata (sync_fs commits the journal or log, or flushes the
// device). Elsewhere (network and FUSE filesystems among them), and on
// kernels before 5.8, each file and directory is synced.
var wholeSyncFS = map[int64]bool{
	unix.EXT4_SUPER_MAGIC:  true, // also ext2 and ext3
	unix.XFS_SUPER_MAGIC:   true,
	unix.BTRFS_SUPER_MAGIC: true,
}

// syncfs is syncfs(2).
func syncfs(f *os.File) error { return unix.Syncfs(int(f.Fd())) }

// syncfsReportsErrors: before Linux 5.8 syncfs returned success even when
// writing back a file had failed, which would hand out references to
// objects that are not stored.
var syncfsReportsErrors = sync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 8)
})

// kernelAtLeast reports whether a kernel release ("6.8.0-45-generic")
// is major.minor or later.
func kernelAtLeast(release string, major, minor int) bool {
	var maj, mnr int
	if _, err := fmt.Sscanf(release, "%d.%d", &maj, &mnr); err != nil {
		return false
	}
	return maj > major || maj == major && mnr >= minor
}

// syncWhole makes the files and dirs that are on root's filesystem
// durable with one sync of that filesystem, where its sync covers them
// all: one device flush for a round instead of one per file and per
// directory, which cost several times the CPU and the time of writing the
// objects (on a 2-core ext4 machine, 420 µs of CPU and 2 ms per object
// with an fsync each, 40-200 µs and 0.1-0.3 ms with one syncfs per 200).
// The sync goes through root, open since the store opened: syncfs reports
// the writeback errors of the filesystem since the handle it is given was
// opened, so a failure that came before any file of the round was opened
// still fails the round. It also writes whatever else is pending on that
// filesystem, so a store sharing one with heavy writers waits for their
// data too. It sets errs[i] for entry i (files first) that it covered and
// reports which those are; the others are for fsync.
func syncWhole(root *os.File, files []*os.File, dirs []string, errs []error, syncFS func(*os.File) error) []bool {
	covered := make([]bool, len(files)+len(dirs))
	if root == nil || !syncfsReportsErrors() {
		return covered
	}
	var fs unix.Statfs_t
	var rootStat unix.Stat_t
	if unix.Fstatfs(int(root.Fd()), &fs) != nil || !wholeSyncFS[int64(fs.Type)] || unix.Fstat(int(root.Fd()), &rootStat) != nil {
		return covered
	}
	var mine []int
	for i, f := range files {
		var st unix.Stat_t
		if unix.Fstat(int(f.Fd()), &st) == nil && st.Dev == rootStat.Dev {
			mine = append(mine, i)
		}
	}
	for i, dir := range dirs {
		var st unix.Stat_t
		if unix.Stat(dir, &st) == nil && st.Dev == rootStat.Dev {
			mine = append(mine, len(files)+i)
		}
	}
	if len(mine) == 0 {
		return covered
	}
	err := syncFS(root)
	if err != nil {
		err = fmt.Errorf("contentstore: sync filesystem: %w", err)
	}
	for _, i := range mine {
		errs[i], covered[i] = err, true
	}
	return covered
}
