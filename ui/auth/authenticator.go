package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// CookieName is the session cookie. The __Host- prefix makes browsers
// insist on Secure, Path=/ and no Domain, so no sibling host can set it.
const CookieName = "__Host-docket_session"

// CSRFHeader carries the session's CSRF token on every state change.
const CSRFHeader = "X-CSRF-Token"

// Errors of Identify and SignIn.
var (
	ErrNoSession        = errors.New("auth: not signed in")
	ErrUntrustedProxy   = errors.New("auth: request did not come from a trusted proxy")
	ErrTooManyAttempts  = errors.New("auth: too many failed sign-ins; wait a few minutes")
	ErrNoGrants         = errors.New("auth: signed in, but no tenant is granted to this identity")
	errHeaderIdentities = errors.New("auth: identity header is missing or malformed")
)

// Session is the identity behind one request.
type Session struct {
	Identity
	Mode               string `json:"mode"`
	CSRFToken          string `json:"csrf_token"`
	MustChangePassword bool   `json:"must_change_password"`
	id                 string
}

// Authenticator signs people in and identifies requests.
type Authenticator struct {
	cfg     Config
	users   *Users
	tokens  *Tokens // nil when API tokens are off
	proxies []netip.Prefix
	csrfKey []byte
	now     func() time.Time

	mu       sync.Mutex
	sessions map[string]*session // by SHA-256 of the cookie value
	// Password checks (see signin.go): failures by client address, backoff
	// by account name, and the addresses and accounts with a check running.
	failures map[string][]time.Time
	accounts map[string]accountState
	inFlight map[string]bool
	// kdfQueue holds a place per reserved check, kdf one per running check.
	kdfQueue chan struct{}
	kdf      chan struct{}
	// kdfHook, if set, is told when a check starts and ends (tests count
	// evaluations with it, not with clocks).
	kdfHook func(client string, start bool)
}

type session struct {
	user     string
	csrf     string
	created  time.Time
	lastSeen time.Time
}

// New prepares an Authenticator. In builtin mode it opens (or creates) the
// users file; a created admin's one-time password is returned once.
func New(cfg Config) (*Authenticator, string, error) {
	if err := cfg.Validate(); err != nil {
		return nil, "", fmt.Errorf("auth: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, "", fmt.Errorf("auth: key: %w", err)
	}
	a := &Authenticator{cfg: cfg, csrfKey: key, now: time.Now, sessions: map[string]*session{},
		failures: map[string][]time.Time{}, accounts: map[string]accountState{}, inFlight: map[string]bool{},
		kdfQueue: make(chan struct{}, kdfWorkers+kdfQueue), kdf: make(chan struct{}, kdfWorkers)}
	if f := cfg.tokensFile(); f != "" {
		tokens, err := OpenTokens(f)
		if err != nil {
			return nil, "", err
		}
		a.tokens = tokens
	}
	var oneTime string
	switch cfg.Mode {
	case ModeBuiltin:
		// Ready before the first sign-in, so an unknown name takes no
		// longer than a known one from the start.
		go dummyHash()
		users, password, err := OpenUsers(cfg.UsersFile)
		if err != nil {
			return nil, "", err
		}
		a.users, oneTime = users, password
	case ModeProxy:
		a.proxies, _ = cfg.Proxy.prefixes() // validated above
	}
	return a, oneTime, nil
}

// Mode is the configured sign-in mode.
func (a *Authenticator) Mode() string { return a.cfg.Mode }

// Users is the built-in account file (nil in proxy mode).
func (a *Authenticator) Users() *Users { return a.users }

// Tokens is the API tokens file (nil when tokens are off).
func (a *Authenticator) Tokens() *Tokens { return a.tokens }

// Identify returns the session of r: an API token's when r carries one
// (Authorization: Bearer), else the signed-in person's.
func (a *Authenticator) Identify(r *http.Request) (Session, error) {
	if raw, ok := a.bearer(r); ok {
		return a.identifyToken(raw)
	}
	if a.cfg.Mode == ModeProxy {
		return a.identifyProxy(r)
	}
	c, err := r.Cookie(CookieName)
	if err != nil || c.Value == "" {
		return Session{}, ErrNoSession
	}
	key := sessionKey(c.Value)
	now := a.now()
	a.mu.Lock()
	s, ok := a.sessions[key]
	if ok && (now.Sub(s.lastSeen) > a.cfg.SessionIdleTimeout || now.Sub(s.created) > a.cfg.SessionMaxAge) {
		delete(a.sessions, key)
		ok = false
	}
	if ok {
		s.lastSeen = now
	}
	a.mu.Unlock()
	if !ok {
		return Session{}, ErrNoSession
	}
	// Grants are read from the account on every request, so a change or
	// a removed account takes effect at once.
	usr, found, err := a.users.Lookup(s.user)
	if err != nil {
		return Session{}, err
	}
	if !found {
		a.forget(key)
		return Session{}, ErrNoSession
	}
	return Session{Identity: Identity{User: usr.Name, Grants: usr.Grants}, Mode: ModeBuiltin,
		CSRFToken: s.csrf, MustChangePassword: usr.MustChangePassword, id: key}, nil
}

// SignIn checks credentials and starts a session, setting its cookie.
func (a *Authenticator) SignIn(w http.ResponseWriter, r *http.Request, name, password string) (Session, error) {
	if a.cfg.Mode != ModeBuiltin {
		return Session{}, errors.New("auth: sign-in is done by the proxy in this deployment")
	}
	at, err := a.reserve(clientAddr(r), name)
	if err != nil {
		return Session{}, err
	}
	var usr User
	err = a.check(at, func() (err error) {
		usr, err = a.users.Authenticate(name, password)
		return err
	})
	a.release(at, err)
	if err != nil {
		return Session{}, err
	}
	token := rand.Text() + rand.Text()
	now := a.now()
	s := &session{user: usr.Name, csrf: rand.Text(), created: now, lastSeen: now}
	key := sessionKey(token)
	a.mu.Lock()
	a.sweepLocked(now)
	a.sessions[key] = s
	a.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: token, Path: "/", HttpOnly: true,
		Secure: !a.cfg.InsecureCookie, SameSite: http.SameSiteStrictMode, MaxAge: int(a.cfg.SessionMaxAge / time.Second)})
	return Session{Identity: Identity{User: usr.Name, Grants: usr.Grants}, Mode: ModeBuiltin, CSRFToken: s.csrf,
		MustChangePassword: usr.MustChangePassword, id: key}, nil
}

// SignOut ends the session of r and clears its cookie.
func (a *Authenticator) SignOut(w http.ResponseWriter, s Session) {
	if s.id != "" {
		a.forget(s.id)
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", HttpOnly: true,
		Secure: !a.cfg.InsecureCookie, SameSite: http.SameSiteStrictMode, MaxAge: -1})
}

// ChangePassword changes the signed-in user's password and ends their
// other sessions.
func (a *Authenticator) ChangePassword(r *http.Request, s Session, current, next string) error {
	if a.cfg.Mode != ModeBuiltin {
		return errors.New("auth: passwords are managed by the proxy's identity provider")
	}
	at, err := a.reserve(clientAddr(r), s.User)
	if err != nil {
		return err
	}
	err = a.check(at, func() error { return a.users.ChangePassword(s.User, current, next) })
	a.release(at, err)
	if err != nil {
		return err
	}
	a.mu.Lock()
	for k, other := range a.sessions {
		if other.user == s.User && k != s.id {
			delete(a.sessions, k)
		}
	}
	a.mu.Unlock()
	return nil
}

// CheckCSRF reports whether r carries the session's CSRF token. A request
// authenticated by an API token needs none: browsers never attach an
// Authorization header on their own, so another site cannot forge one.
func (a *Authenticator) CheckCSRF(r *http.Request, s Session) bool {
	if s.Mode == ModeToken {
		return true
	}
	got := r.Header.Get(CSRFHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.CSRFToken)) == 1
}

// bearer returns the API token r carries. In proxy mode only a Docket
// token counts: the proxy may forward a bearer token of its own.
func (a *Authenticator) bearer(r *http.Request) (string, bool) {
	v := r.Header.Get("Authorization")
	scheme, raw, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	raw = strings.TrimSpace(raw)
	if a.cfg.Mode == ModeProxy && !strings.HasPrefix(raw, TokenPrefix) {
		return "", false
	}
	return raw, true
}

func (a *Authenticator) identifyToken(raw string) (Session, error) {
	if a.tokens == nil {
		return Session{}, ErrBadToken
	}
	tok, err := a.tokens.Authenticate(raw, a.now())
	if err != nil {
		return Session{}, err
	}
	return Session{Identity: Identity{User: tok.Principal(), Grants: tok.Grants}, Mode: ModeToken}, nil
}

func (a *Authenticator) identifyProxy(r *http.Request) (Session, error) {
	addr, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil || !a.trusted(addr.Addr().Unmap()) {
		return Session{}, ErrUntrustedProxy
	}
	user := r.Header.Get(a.cfg.Proxy.UserHeader)
	if !validHeaderValue(user) || len(r.Header.Values(a.cfg.Proxy.UserHeader)) != 1 {
		return Session{}, errHeaderIdentities
	}
	grants := Grants{}
	grants.merge(a.cfg.Proxy.Users[user])
	if a.cfg.Proxy.GroupsHeader != "" {
		for _, v := range r.Header.Values(a.cfg.Proxy.GroupsHeader) {
			for _, g := range strings.Split(v, ",") {
				grants.merge(a.cfg.Proxy.Groups[strings.TrimSpace(g)])
			}
		}
	}
	if len(grants) == 0 {
		return Session{}, ErrNoGrants
	}
	mac := hmac.New(sha256.New, a.csrfKey)
	mac.Write([]byte(user))
	return Session{Identity: Identity{User: user, Grants: grants}, Mode: ModeProxy,
		CSRFToken: base64.RawURLEncoding.EncodeToString(mac.Sum(nil))}, nil
}

func (a *Authenticator) trusted(addr netip.Addr) bool {
	for _, p := range a.proxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

func validHeaderValue(v string) bool {
	return v != "" && len(v) <= 256 && utf8.ValidString(v) && !strings.ContainsAny(v, "\x00\r\n")
}

func (a *Authenticator) forget(key string) {
	a.mu.Lock()
	delete(a.sessions, key)
	a.mu.Unlock()
}

func (a *Authenticator) sweepLocked(now time.Time) {
	for k, s := range a.sessions {
		if now.Sub(s.lastSeen) > a.cfg.SessionIdleTimeout || now.Sub(s.created) > a.cfg.SessionMaxAge {
			delete(a.sessions, k)
		}
	}
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func sessionKey(token string) string {
	sum := sha256.Sum256([]byte(token))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}
