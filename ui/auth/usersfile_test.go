package auth

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/docketlabs/docket/ledger/access"
)

// smallDisk mounts a tmpfs of size bytes at a new directory (root only)
// and fills it, so that the next write fails with ENOSPC.
func smallDisk(t *testing.T, size string) (dir string, fill func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir = t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir, func() {
		f, err := os.Create(filepath.Join(dir, "filler"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		block := bytes.Repeat([]byte{'x'}, 4096)
		for {
			if _, err := f.Write(block); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatal(err)
				}
				return
			}
		}
	}
}

// TestUsersFileSurvivesAFullDisk: a write that fails on a full disk is
// reported and leaves the users file as it was — before, the error was
// dropped and an empty file replaced every account.
func TestUsersFileSurvivesAFullDisk(t *testing.T) {
	dir, fill := smallDisk(t, "256k")
	path := filepath.Join(dir, "users.json")
	users, _, err := OpenUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := users.Add("ana", Grants{"acme": access.RoleAuditor}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fill()
	if _, err := users.Add("bob", Grants{"acme": access.RoleViewer}); err == nil {
		t.Fatal("adding a user on a full disk reported success")
	}
	if _, ok, _ := users.Lookup("bob"); ok {
		t.Fatal("an account whose write failed exists in memory")
	}
	if _, err := users.ResetPassword("ana"); err == nil {
		t.Fatal("resetting a password on a full disk reported success")
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatalf("the users file changed after failed writes: %d bytes before, %d after", len(before), len(after))
	}
	again, _, err := OpenUsers(path)
	if err != nil {
		t.Fatalf("reopen after failed writes: %v", err)
	}
	if _, ok, _ := again.Lookup("ana"); !ok {
		t.Fatal("an account was lost")
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".users-*"))
	if len(leftovers) > 0 {
		t.Fatalf("temporary files left behind: %v", leftovers)
	}
}

// TestUsersFileInAReadOnlyDirectory: a directory the process may not write
// gives an error, not a lost file.
func TestUsersFileInAReadOnlyDirectory(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.json")
	users, _, err := OpenUsers(path)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	if err := syscall.Mount(dir, dir, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("cannot bind-mount here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY, ""); err != nil {
		t.Skipf("cannot remount read-only here: %v", err)
	}
	if _, err := users.Add("bob", Grants{"acme": access.RoleViewer}); err == nil {
		t.Fatal("adding a user in a read-only directory reported success")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the users file changed")
	}
}
