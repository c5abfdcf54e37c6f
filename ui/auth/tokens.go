package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// TokenPrefix starts every API token, so that secret scanners can find a
// leaked one and a proxy's own bearer tokens are told apart.
const TokenPrefix = "dkt_"

// ServiceAccountPrefix starts the name a service account acts under, in
// the access log and wherever a person's name would appear. User names
// cannot contain ':', so no person can take it.
const ServiceAccountPrefix = "service:"

// ModeToken is the Session.Mode of a request authenticated by an API token.
const ModeToken = "token"

// Errors of token authentication; all of them are answered with 401.
var (
	ErrBadToken     = errors.New("auth: the API token is not valid")
	ErrTokenRevoked = errors.New("auth: the API token was revoked")
	ErrTokenExpired = errors.New("auth: the API token has expired")
	// ErrTokenExists is returned when a service account name is taken;
	// names are never reused, so the access log stays unambiguous.
	ErrTokenExists = errors.New("auth: a service account of that name exists")
	// ErrTokenRequest is a token request with a bad name, grants or expiry.
	ErrTokenRequest = errors.New("auth: invalid token request")
)

var (
	tokenIDPattern   = regexp.MustCompile(`^[A-Z2-7]{26}$`)
	tokenNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)
)

// lastUsedEvery bounds how often a token's last use is written to the file.
const lastUsedEvery = time.Minute

// Token is a service account's API token as stored: the SHA-256 of its
// secret, never the secret.
type Token struct {
	ID           string     `json:"id"`
	Name         string     `json:"name"`
	Grants       Grants     `json:"grants"`
	SecretSHA256 string     `json:"secret_sha256,omitempty"`
	CreatedBy    string     `json:"created_by"`
	CreatedAt    time.Time  `json:"created_at"`
	ExpiresAt    time.Time  `json:"expires_at"`
	RevokedAt    *time.Time `json:"revoked_at,omitempty"`
	RevokedBy    string     `json:"revoked_by,omitempty"`
	LastUsedAt   *time.Time `json:"last_used_at,omitempty"`
}

// Principal is the name the token's service account acts under.
func (t Token) Principal() string { return ServiceAccountPrefix + t.Name }

// Status is active, revoked or expired at now.
func (t Token) Status(now time.Time) string {
	switch {
	case t.RevokedAt != nil:
		return "revoked"
	case !now.Before(t.ExpiresAt):
		return "expired"
	}
	return "active"
}

// TokenState is a token as listed: its record and its status at a time.
type TokenState struct {
	Token
	Status string `json:"status"`
}

// At is t with its status at now.
func (t Token) At(now time.Time) TokenState { return TokenState{Token: t, Status: t.Status(now)} }

// Tokens is the file of API tokens, written like the users file
// (atomically, mode 0600). The UI process and `docket ui tokens` both
// change it, so every change rereads it under an exclusive lock on
// path.lock: a revocation is never overwritten by a last-used update.
type Tokens struct {
	path  string
	mu    sync.Mutex
	byID  map[string]Token
	stamp fileStamp
	// persisted is when each token's last use was last written.
	persisted map[string]time.Time
}

// TokensFileFor is the tokens file kept beside a users file.
func TokensFileFor(usersFile string) string {
	return filepath.Join(filepath.Dir(usersFile), "ui-tokens.json")
}

// OpenTokens loads path; a missing file is an empty one.
func OpenTokens(path string) (*Tokens, error) {
	t := &Tokens{path: path, byID: map[string]Token{}, persisted: map[string]time.Time{}}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.refreshLocked(); err != nil {
		return nil, err
	}
	return t, nil
}

func (t *Tokens) refreshLocked() error {
	st := stampOf(t.path)
	if st == t.stamp {
		return nil
	}
	data, err := os.ReadFile(t.path)
	if errors.Is(err, os.ErrNotExist) {
		t.byID, t.stamp = map[string]Token{}, st
		return nil
	}
	if err != nil {
		return fmt.Errorf("auth: read tokens: %w", err)
	}
	var list []Token
	if err := json.Unmarshal(data, &list); err != nil {
		return fmt.Errorf("auth: tokens file %s: %w", t.path, err)
	}
	byID := make(map[string]Token, len(list))
	for _, tok := range list {
		if !tokenIDPattern.MatchString(tok.ID) || !tokenNamePattern.MatchString(tok.Name) {
			return fmt.Errorf("auth: tokens file %s: invalid token id or name", t.path)
		}
		if err := tok.Grants.Validate(); err != nil {
			return fmt.Errorf("auth: tokens file %s: token %s: %w", t.path, tok.Name, err)
		}
		byID[tok.ID] = tok
	}
	t.byID, t.stamp = byID, st
	return nil
}

// change rereads the file under the cross-process lock, lets fn change the
// tokens, and writes them back; memory changes only once the file has.
func (t *Tokens) change(fn func(map[string]Token) error) error {
	lock, err := os.OpenFile(t.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("auth: lock tokens: %w", err)
	}
	defer func() { _ = lock.Close() }()
	if err = syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("auth: lock tokens: %w", err)
	}
	// Another process may have written within the stamp's resolution.
	t.stamp = fileStamp{}
	if err = t.refreshLocked(); err != nil {
		return err
	}
	next := make(map[string]Token, len(t.byID)+1)
	for id, tok := range t.byID {
		next[id] = tok
	}
	if err = fn(next); err != nil {
		return err
	}
	list := make([]Token, 0, len(next))
	for _, tok := range next {
		list = append(list, tok)
	}
	sort.Slice(list, func(i, j int) bool { return list[i].CreatedAt.Before(list[j].CreatedAt) })
	data, err := json.MarshalIndent(list, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: encode tokens: %w", err)
	}
	if err := writeFileAtomic(t.path, data); err != nil {
		return fmt.Errorf("auth: write tokens: %w", err)
	}
	t.byID, t.stamp = next, stampOf(t.path)
	return nil
}

// Create makes a token for the service account name with grants, valid
// until expires, and returns its secret form once; only its hash is kept.
func (t *Tokens) Create(name string, grants Grants, by string, expires time.Time) (string, Token, error) {
	if !tokenNamePattern.MatchString(name) {
		return "", Token{}, fmt.Errorf("%w: the service account name must match %s", ErrTokenRequest, tokenNamePattern)
	}
	if len(grants) == 0 {
		return "", Token{}, fmt.Errorf("%w: a token needs at least one grant", ErrTokenRequest)
	}
	if err := grants.Validate(); err != nil {
		return "", Token{}, fmt.Errorf("%w: %w", ErrTokenRequest, err)
	}
	if expires.IsZero() {
		return "", Token{}, fmt.Errorf("%w: a token needs an expiry", ErrTokenRequest)
	}
	// 26 + 52 base32 characters: 130 bits of ID, 260 of secret.
	id, secret := rand.Text(), rand.Text()+rand.Text()
	tok := Token{ID: id, Name: name, Grants: grants, SecretSHA256: secretHash(secret), CreatedBy: by,
		CreatedAt: time.Now().UTC(), ExpiresAt: expires.UTC()}
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.change(func(m map[string]Token) error {
		for _, other := range m {
			if other.Name == name {
				return fmt.Errorf("%w: %s", ErrTokenExists, name)
			}
		}
		m[id] = tok
		return nil
	})
	if err != nil {
		return "", Token{}, err
	}
	tok.SecretSHA256 = ""
	return TokenPrefix + id + "_" + secret, tok, nil
}

// Revoke ends the token id at once, for every process that reads the file.
func (t *Tokens) Revoke(id, by string) (Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out Token
	err := t.change(func(m map[string]Token) error {
		tok, ok := m[id]
		if !ok {
			return fmt.Errorf("auth: no token %s", id)
		}
		if tok.RevokedAt == nil {
			now := time.Now().UTC()
			tok.RevokedAt, tok.RevokedBy = &now, by
			m[id] = tok
		}
		out = tok
		return nil
	})
	out.SecretSHA256 = ""
	return out, err
}

// Lookup returns token id without its hash.
func (t *Tokens) Lookup(id string) (Token, bool, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.refreshLocked()
	tok, ok := t.byID[id]
	tok.SecretSHA256 = ""
	return tok, ok, err
}

// List returns the tokens without their hashes, oldest first.
func (t *Tokens) List() ([]Token, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.refreshLocked()
	out := make([]Token, 0, len(t.byID))
	for _, tok := range t.byID {
		tok.SecretSHA256 = ""
		out = append(out, tok)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

// Authenticate checks a token's secret form at now and notes its use.
func (t *Tokens) Authenticate(raw string, now time.Time) (Token, error) {
	rest, ok := strings.CutPrefix(raw, TokenPrefix)
	id, secret, ok2 := strings.Cut(rest, "_")
	if !ok || !ok2 || !tokenIDPattern.MatchString(id) || len(secret) > 128 {
		return Token{}, ErrBadToken
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.refreshLocked(); err != nil {
		return Token{}, err
	}
	tok, found := t.byID[id]
	want, err := hex.DecodeString(tok.SecretSHA256)
	if !found || err != nil || len(want) != sha256.Size {
		want = make([]byte, sha256.Size)
		found = false
	}
	got := sha256.Sum256([]byte(secret))
	if subtle.ConstantTimeCompare(got[:], want) != 1 || !found {
		return Token{}, ErrBadToken
	}
	switch tok.Status(now) {
	case "revoked":
		return Token{}, ErrTokenRevoked
	case "expired":
		return Token{}, ErrTokenExpired
	}
	if now.Sub(t.persisted[id]) >= lastUsedEvery {
		at := now.UTC()
		err := t.change(func(m map[string]Token) error {
			cur, ok := m[id]
			if !ok || cur.RevokedAt != nil {
				// Revoked by another process since the read above.
				return ErrTokenRevoked
			}
			cur.LastUsedAt = &at
			m[id] = cur
			return nil
		})
		if err != nil {
			return Token{}, err
		}
		t.persisted[id] = now
		tok = t.byID[id]
	}
	tok.SecretSHA256 = ""
	return tok, nil
}

func secretHash(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}
