package contentstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A sync round on a filesystem whose sync covers everything on it (on a
// kernel whose syncfs reports writeback errors) is one sync, through the
// root opened before the round's files, whose error is every file's and
// directory's; elsewhere nothing is covered and each is synced on its own.
func TestSyncWholeSyncsEachFilesystemOnce(t *testing.T) {
	dir := t.TempDir()
	var files []*os.File
	var dirs []string
	for _, name := range []string{"a", "b", "c"} {
		sub := filepath.Join(dir, name)
		if err := os.Mkdir(sub, 0o700); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(sub, "object"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Close() })
		files, dirs = append(files, f), append(dirs, sub)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	root, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = root.Close() })
	whole := wholeSyncFS[int64(st.Type)] && syncfsReportsErrors()
	for _, fail := range []error{nil, errors.New("EIO")} {
		calls := 0
		errs := make([]error, len(files)+len(dirs))
		covered := syncWhole(root, files, dirs, errs, func(f *os.File) error {
			if f != root {
				t.Errorf("synced through %s, want the root opened beforehand", f.Name())
			}
			calls++
			return fail
		})
		if !whole {
			if calls != 0 || errors.Join(errs...) != nil {
				t.Fatalf("filesystem type %#x: %d syncs, errors %v; want none", st.Type, calls, errs)
			}
			for i, c := range covered {
				if c {
					t.Fatalf("entry %d covered on filesystem type %#x", i, st.Type)
				}
			}
			continue
		}
		if calls != 1 {
			t.Fatalf("%d syncs of one filesystem, want 1", calls)
		}
		for i := range errs {
			if !covered[i] || !errors.Is(errs[i], fail) || (fail == nil) != (errs[i] == nil) {
				t.Fatalf("entry %d: covered %v, error %v; want covered with %v", i, covered[i], errs[i], fail)
			}
		}
	}
}

// The real sync of the store's filesystem succeeds and covers a round.
func TestSyncWholeWithSyncfs(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "object"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	errs := make([]error, 2)
	root, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = root.Close() }()
	covered := syncWhole(root, []*os.File{f}, []string{dir}, errs, syncfs)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if covered[0] != covered[1] {
		t.Fatalf("a file and its directory on one filesystem: covered %v", covered)
	}
}

func TestKernelAtLeast(t *testing.T) {
	for release, want := range map[string]bool{
		"6.18.44-fc-v1045":         true,
		"5.8.0":                    true,
		"5.15.0-105-generic":       true,
		"5.7.19":                   false,
		"4.18.0-553.el8_10.x86_64": false,
		"garbage":                  false,
	} {
		if got := kernelAtLeast(release, 5, 8); got != want {
			t.Errorf("kernelAtLeast(%q, 5, 8) = %v, want %v", release, got, want)
		}
	}
}
