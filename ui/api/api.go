// Package api serves the evidence UI's JSON API and its pages behind
// sign-in: complaint lookup, content reveal, ledger views, audit export
// and the admin pages. Every handler acts as the signed-in person, through
// the ledger packages' own access checks.
package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ledger/views"
	"github.com/docketlabs/docket/replay/runs"
	"github.com/docketlabs/docket/ui/auth"
)

// Deps are what the API serves from.
type Deps struct {
	Ledger *ledgerstore.Store
	// LedgerState tells whether the ledger is open; nil means it is.
	LedgerState func() storageconfig.State
	// Content is the content store; nil means content cannot be revealed
	// (answered with 503, recorded as such).
	Content contentstore.Store
	// Lifecycle is the holds/deletions manager; nil without a content store.
	Lifecycle *lifecycle.Manager
	// Runner is the background lifecycle, whose status the admin page
	// shows; nil when none runs in this process.
	Runner *lifecycle.Runner
	Auth   *auth.Authenticator
	// Account is the completeness account of the collector this UI runs
	// in; nil when it runs on its own.
	Account *completeness.Account
	// Replays runs distribution replays started from a complaint page; nil
	// means replay is not offered here.
	Replays *runs.Manager
	// ExportDir is where bundles made from the UI are written.
	ExportDir string
	Logger    *slog.Logger
	// Now is the clock of export expiry; nil is time.Now.
	Now func() time.Time
}

// maxBody bounds every request body; the largest legitimate one is a
// reveal or hold reason.
const maxBody = 64 << 10

type api struct {
	Deps
	reader *access.Reader
}

// Handler serves the UI pages, their assets and /api/v1.
func Handler(d Deps) http.Handler {
	a := &api{Deps: d, reader: &access.Reader{Content: d.Content, Ledger: d.Ledger}}
	if a.Now == nil {
		a.Now = time.Now
	}
	mux := http.NewServeMux()
	a.routes(mux)
	cop := http.NewCrossOriginProtection()
	return securityHeaders(cop.Handler(mux))
}

func (a *api) routes(mux *http.ServeMux) {
	// Open to everyone: sign-in and liveness.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	mux.HandleFunc("POST /api/v1/session", a.signIn)
	mux.HandleFunc("GET /api/v1/session", a.session)
	mux.HandleFunc("DELETE /api/v1/session", a.signOut)
	mux.Handle("GET /api/v1/status", a.signedIn(a.status))
	mux.Handle("POST /api/v1/session/password", a.signedIn(a.changePassword))

	mux.Handle("GET /api/v1/search", a.allowed(access.RoleViewer, a.search))
	mux.Handle("GET /api/v1/evidence/{trace_id}", a.allowed(access.RoleViewer, a.evidence))
	mux.Handle("POST /api/v1/reveal", a.allowed(access.RoleViewer, a.reveal))

	mux.Handle("GET /api/v1/calls", a.allowed(access.RoleViewer, a.calls))
	mux.Handle("GET /api/v1/facets", a.allowed(access.RoleViewer, a.facets))
	mux.Handle("GET /api/v1/costs", a.allowed(access.RoleViewer, a.costs))
	mux.Handle("GET /api/v1/timeseries", a.allowed(access.RoleViewer, a.timeseries))
	mux.Handle("GET /api/v1/latency", a.allowed(access.RoleViewer, a.latency))
	mux.Handle("GET /api/v1/ledger/stats", a.allowed(access.RoleViewer, a.stats))
	mux.Handle("GET /api/v1/reconcile", a.allowed(access.RoleViewer, a.reconcileReport))
	mux.Handle("GET /api/v1/completeness", a.allowed(access.RoleViewer, a.completenessReport))
	mux.Handle("POST /api/v1/usage/imports", a.allowed(access.RoleAdmin, a.importUsage))

	mux.Handle("GET /api/v1/replays/limits", a.allowed(access.RoleAuditor, a.replayLimits))
	mux.Handle("POST /api/v1/replays", a.allowed(access.RoleAuditor, a.startReplay))
	mux.Handle("GET /api/v1/replays/{id}", a.allowed(access.RoleAuditor, a.replayStatus))
	mux.Handle("POST /api/v1/replays/{id}/cancel", a.allowed(access.RoleAuditor, a.cancelReplay))

	mux.Handle("POST /api/v1/exports", a.allowedStream(access.RoleAuditor, a.createExport))
	mux.Handle("GET /api/v1/exports/{file}", a.allowedStream(access.RoleAuditor, a.downloadExport))

	mux.Handle("GET /api/v1/holds", a.allowed(access.RoleAdmin, a.holds))
	// Creating a hold waits for deletions under way and holds every covered
	// object; releasing one runs the deletion jobs it blocked.
	mux.Handle("POST /api/v1/holds", a.long(access.RoleAdmin, a.createHold))
	mux.Handle("POST /api/v1/holds/{id}/release", a.long(access.RoleAdmin, a.releaseHold))
	mux.Handle("GET /api/v1/deletions", a.allowed(access.RoleAdmin, a.deletions))
	mux.Handle("POST /api/v1/deletions", a.allowed(access.RoleAdmin, a.createDeletion))
	mux.Handle("GET /api/v1/deletions/{id}", a.allowed(access.RoleAdmin, a.deletion))
	mux.Handle("POST /api/v1/deletions/{id}/run", a.long(access.RoleAdmin, a.runDeletion))
	mux.Handle("POST /api/v1/lifecycle/expire", a.long(access.RoleAdmin, a.expire))
	mux.Handle("GET /api/v1/lifecycle/events", a.allowed(access.RoleAdmin, a.contentEvents))
	mux.Handle("GET /api/v1/access-log", a.allowed(access.RoleAdmin, a.accessLog))
	mux.Handle("GET /api/v1/lifecycle", a.allowed(access.RoleAdmin, a.lifecycleStatus))
	mux.Handle("GET /api/v1/tokens", a.allowed(access.RoleAdmin, a.listTokens))
	mux.Handle("POST /api/v1/tokens", a.allowed(access.RoleAdmin, a.createToken))
	mux.Handle("POST /api/v1/tokens/{id}/revoke", a.allowed(access.RoleAdmin, a.revokeToken))

	mux.HandleFunc("/api/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint")
	})
	a.pages(mux)
}

// handler is an API endpoint acting for a signed-in session. It returns
// the status and value to answer with, or an error (see fail).
type handler func(r *http.Request, s auth.Session) (int, any, error)

// serve writes what h answers.
func (h handler) serve(w http.ResponseWriter, r *http.Request, s auth.Session) error {
	code, v, err := h(r, s)
	if err != nil {
		return err
	}
	if v == nil {
		w.WriteHeader(code)
		return nil
	}
	writeJSON(w, code, v)
	return nil
}

// signedIn serves h to any signed-in session, checking CSRF on state
// changes; a session that must change its password may still use it.
func (a *api) signedIn(h handler) http.Handler {
	return a.guard(h.serve, func(auth.Session) error { return nil })
}

// allowed serves h to sessions holding at least min in some tenant; the
// handler narrows to tenants itself.
func (a *api) allowed(min access.Role, h handler) http.Handler {
	return a.allowedStream(min, h.serve)
}

// allowedStream is allowed for handlers that write their own response.
func (a *api) allowedStream(min access.Role, serve func(http.ResponseWriter, *http.Request, auth.Session) error) http.Handler {
	return a.guard(serve, func(s auth.Session) error {
		if s.MustChangePassword {
			return httpError(http.StatusForbidden, "password change required")
		}
		if !s.HasAnywhere(min) {
			return httpError(http.StatusForbidden, fmt.Sprintf("this needs the %s role in some tenant", min))
		}
		return nil
	})
}

func (a *api) guard(serve func(http.ResponseWriter, *http.Request, auth.Session) error, check func(auth.Session) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s, err := a.Auth.Identify(r)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if r.Method != http.MethodGet && !a.Auth.CheckCSRF(r, s) {
			writeError(w, http.StatusForbidden, "missing or wrong CSRF token")
			return
		}
		if err := check(s); err != nil {
			a.fail(w, r, err)
			return
		}
		if err := serve(w, r, s); err != nil {
			a.fail(w, r, err)
		}
	})
}

// statusError is an error whose words may be shown as they are.
type statusError struct {
	code int
	msg  string
}

func (e *statusError) Error() string { return e.msg }

func httpError(code int, msg string) error { return &statusError{code: code, msg: msg} }

// fail answers err. Errors of the ledger packages' checks carry words
// without content and are shown; anything else is logged and answered
// with a generic message, because an engine error may quote a query.
func (a *api) fail(w http.ResponseWriter, r *http.Request, err error) {
	var se *statusError
	switch {
	case errors.As(err, &se):
		writeError(w, se.code, se.msg)
	case errors.Is(err, auth.ErrNoSession):
		writeError(w, http.StatusUnauthorized, "sign in first")
	case errors.Is(err, auth.ErrBadToken), errors.Is(err, auth.ErrTokenRevoked), errors.Is(err, auth.ErrTokenExpired):
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		writeError(w, http.StatusUnauthorized, strings.TrimPrefix(err.Error(), "auth: "))
	case errors.Is(err, auth.ErrBadCredentials):
		writeError(w, http.StatusUnauthorized, "wrong user name or password")
	case errors.Is(err, auth.ErrSignInBusy):
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusTooManyRequests, err.Error())
	case errors.Is(err, auth.ErrTooManyAttempts):
		writeError(w, http.StatusTooManyRequests, err.Error())
	case errors.Is(err, auth.ErrUntrustedProxy), errors.Is(err, auth.ErrNoGrants):
		writeError(w, http.StatusForbidden, err.Error())
	case errors.Is(err, auth.ErrWeakPassword), errors.Is(err, auth.ErrCommonPassword):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, access.ErrDenied):
		writeError(w, http.StatusForbidden, err.Error())
	case errors.Is(err, lifecycle.ErrInvalid), errors.Is(err, views.ErrInvalid):
		writeError(w, http.StatusBadRequest, err.Error())
	case errors.Is(err, lifecycle.ErrNotFound):
		writeError(w, http.StatusNotFound, "not found")
	case errors.Is(err, contentstore.ErrNotFound):
		writeError(w, http.StatusGone, "the content is no longer in the store")
	default:
		a.Logger.Error("ui api", "path", r.URL.Path, "err", err)
		writeError(w, http.StatusServiceUnavailable, "the ledger or content store is unavailable; see the server log")
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}

// decode reads a bounded JSON body into v, refusing unknown fields.
func decode(r *http.Request, v any) error {
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return httpError(http.StatusUnsupportedMediaType, "send application/json")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, maxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return httpError(http.StatusBadRequest, "request body is not the expected JSON (or over 64 KiB)")
	}
	return nil
}

// timeParam parses an RFC 3339 query parameter; an HTML datetime-local
// value without zone is taken as UTC.
func timeParam(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, httpError(http.StatusBadRequest, name+" must be RFC 3339 (2026-03-01T12:00:00Z) or a date")
}
