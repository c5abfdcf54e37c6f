package auth

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/docketlabs/docket/internal/atomicfile"
	"github.com/docketlabs/docket/ledger/access"
)

// ErrBadCredentials is the one answer to a failed sign-in, whether the user
// is unknown or the password wrong.
var ErrBadCredentials = errors.New("auth: wrong user name or password")

// ErrUserExists is returned when adding a name that is taken.
var ErrUserExists = errors.New("auth: user exists")

var userNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$`)

// User is a built-in account.
type User struct {
	Name         string `json:"name"`
	PasswordHash string `json:"password_hash"`
	Grants       Grants `json:"grants"`
	// MustChangePassword is set for generated passwords: the account can
	// do nothing but change it.
	MustChangePassword bool      `json:"must_change_password"`
	CreatedAt          time.Time `json:"created_at"`
	PasswordChangedAt  time.Time `json:"password_changed_at"`
}

// Users is the file of built-in accounts. Every change rewrites the file
// atomically (see writeFileAtomic) with mode 0600.
type Users struct {
	path  string
	mu    sync.Mutex
	users map[string]User
	// stamp is the file's state when last read or written; a different
	// one means another process (`docket ui users`) changed it.
	stamp fileStamp
}

// dummyHash is verified against unknown names so that a missing user
// costs as much time as a wrong password. One per process: it is an
// Argon2id run, which tools that only add a user need not pay.
var dummyHash = sync.OnceValue(func() string {
	h, _ := HashPassword(GeneratePassword())
	return h
})

// OpenUsers loads path. If the file does not exist it is created with one
// admin account named admin and a generated password, which is returned
// once (it must be changed at first sign-in); otherwise the password is "".
func OpenUsers(path string) (*Users, string, error) {
	u := &Users{path: path, users: map[string]User{}}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		password := GeneratePassword()
		if err = u.add("admin", password, Grants{access.AllTenants: access.RoleAdmin}, true); err != nil {
			return nil, "", err
		}
		return u, password, nil
	case err != nil:
		return nil, "", fmt.Errorf("auth: read users: %w", err)
	}
	if err := u.parse(data); err != nil {
		return nil, "", err
	}
	u.stamp = stampOf(path)
	return u, "", nil
}

type fileStamp struct {
	modTime time.Time
	size    int64
}

func stampOf(path string) fileStamp {
	info, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	return fileStamp{info.ModTime(), info.Size()}
}

func (u *Users) parse(data []byte) error {
	var list []User
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("auth: users file %s: %w", u.path, err)
	}
	users := make(map[string]User, len(list))
	for _, usr := range list {
		if !userNamePattern.MatchString(usr.Name) {
			return fmt.Errorf("auth: users file %s: invalid user name", u.path)
		}
		if err := usr.Grants.Validate(); err != nil {
			return fmt.Errorf("auth: users file %s: user %s: %w", u.path, usr.Name, err)
		}
		users[usr.Name] = usr
	}
	u.users = users
	return nil
}

// refreshLocked rereads the file if another process changed it. A file
// that became unreadable or invalid keeps the accounts last read, and
// says so in the error.
func (u *Users) refreshLocked() error {
	st := stampOf(u.path)
	if st == u.stamp {
		return nil
	}
	data, err := os.ReadFile(u.path)
	if err != nil {
		return fmt.Errorf("auth: reread users: %w", err)
	}
	if err := u.parse(data); err != nil {
		return err
	}
	u.stamp = st
	return nil
}

// Authenticate checks a name and password.
func (u *Users) Authenticate(name, password string) (User, error) {
	u.mu.Lock()
	refreshErr := u.refreshLocked()
	usr, ok := u.users[name]
	u.mu.Unlock()
	if refreshErr != nil {
		return User{}, refreshErr
	}
	hash := usr.PasswordHash
	if !ok {
		hash = dummyHash()
	}
	match, err := VerifyPassword(hash, password)
	if err != nil {
		return User{}, fmt.Errorf("auth: user %s: %w", name, err)
	}
	if !ok || !match {
		return User{}, ErrBadCredentials
	}
	return usr, nil
}

// Lookup returns the current record of name.
func (u *Users) Lookup(name string) (User, bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	err := u.refreshLocked()
	usr, ok := u.users[name]
	return usr, ok, err
}

// Add creates an account with a generated password, returned once; the
// user must change it at first sign-in.
func (u *Users) Add(name string, grants Grants) (string, error) {
	password := GeneratePassword()
	return password, u.add(name, password, grants, true)
}

func (u *Users) add(name, password string, grants Grants, mustChange bool) error {
	if !userNamePattern.MatchString(name) {
		return fmt.Errorf("auth: user name must match %s", userNamePattern)
	}
	if err := grants.Validate(); err != nil {
		return err
	}
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.refreshLocked(); err != nil {
		return err
	}
	if _, ok := u.users[name]; ok {
		return fmt.Errorf("%w: %s", ErrUserExists, name)
	}
	now := time.Now().UTC()
	return u.putLocked(User{Name: name, PasswordHash: hash, Grants: grants, MustChangePassword: mustChange, CreatedAt: now, PasswordChangedAt: now})
}

// ChangePassword sets a new password after checking the current one.
func (u *Users) ChangePassword(name, current, next string) error {
	if _, err := u.Authenticate(name, current); err != nil {
		return err
	}
	if current == next {
		return fmt.Errorf("%w; the new password must differ from the current one", ErrWeakPassword)
	}
	hash, err := HashPassword(next)
	if err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	usr, ok := u.users[name]
	if !ok {
		return ErrBadCredentials
	}
	usr.PasswordHash, usr.MustChangePassword, usr.PasswordChangedAt = hash, false, time.Now().UTC()
	return u.putLocked(usr)
}

// ResetPassword gives name a new generated password that must be changed
// at the next sign-in, and returns it once.
func (u *Users) ResetPassword(name string) (string, error) {
	password := GeneratePassword()
	hash, err := HashPassword(password)
	if err != nil {
		return "", err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if err := u.refreshLocked(); err != nil {
		return "", err
	}
	usr, ok := u.users[name]
	if !ok {
		return "", fmt.Errorf("auth: no user %s", name)
	}
	usr.PasswordHash, usr.MustChangePassword, usr.PasswordChangedAt = hash, true, time.Now().UTC()
	return password, u.putLocked(usr)
}

// List returns the accounts without their hashes, by name.
func (u *Users) List() []User {
	u.mu.Lock()
	defer u.mu.Unlock()
	out := make([]User, 0, len(u.users))
	for _, usr := range u.users {
		usr.PasswordHash = ""
		out = append(out, usr)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// putLocked writes the accounts with usr added or replaced, and changes
// them in memory only once the file holds the change.
func (u *Users) putLocked(usr User) error {
	list := make([]User, 0, len(u.users)+1)
	for _, other := range u.users {
		if other.Name != usr.Name {
			list = append(list, other)
		}
	}
	list = append(list, usr)
	sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: encode users: %w", err)
	}
	if err := writeFileAtomic(u.path, data); err != nil {
		return fmt.Errorf("auth: write users: %w", err)
	}
	u.users[usr.Name] = usr
	u.stamp = stampOf(u.path)
	return nil
}

// writeFileAtomic replaces path with data, mode 0600, creating its
// directory: a crash or a failed write (a full disk) leaves either the old
// file or the new one.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, data, 0o600)
}
