package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ui/auth"
)

// maxTokenDays bounds a token's life: a forgotten integration's token
// ends on its own.
const maxTokenDays = 366

// tokensFile is the tokens file, for people only: a service account may
// not mint or revoke credentials, so a leaked token cannot keep itself
// alive or make more.
func (a *api) tokensFile(s auth.Session) (*auth.Tokens, error) {
	if s.Mode == auth.ModeToken {
		return nil, httpError(http.StatusForbidden, "service accounts cannot manage API tokens")
	}
	t := a.Auth.Tokens()
	if t == nil {
		return nil, httpError(http.StatusServiceUnavailable, "API tokens are off (set auth.tokens_file)")
	}
	return t, nil
}

// administers reports whether s is an admin of every tenant g grants, so
// that nobody hands out more than they hold.
func administers(s auth.Session, g auth.Grants) bool {
	for tenant := range g {
		if s.Role(tenant) != access.RoleAdmin {
			return false
		}
	}
	return true
}

func (a *api) listTokens(_ *http.Request, s auth.Session) (int, any, error) {
	t, err := a.tokensFile(s)
	if err != nil {
		return 0, nil, err
	}
	list, err := t.List()
	if err != nil {
		return 0, nil, err
	}
	now := a.Now()
	out := []auth.TokenState{}
	for _, tok := range list {
		if administers(s, tok.Grants) {
			out = append(out, tok.At(now))
		}
	}
	return http.StatusOK, map[string]any{"tokens": out}, nil
}

func (a *api) createToken(r *http.Request, s auth.Session) (int, any, error) {
	t, err := a.tokensFile(s)
	if err != nil {
		return 0, nil, err
	}
	var body struct {
		Name          string      `json:"name"`
		Grants        auth.Grants `json:"grants"`
		ExpiresInDays int         `json:"expires_in_days"`
	}
	if err = decode(r, &body); err != nil {
		return 0, nil, err
	}
	if body.ExpiresInDays < 1 || body.ExpiresInDays > maxTokenDays {
		return 0, nil, httpError(http.StatusBadRequest, "expires_in_days must be between 1 and 366")
	}
	if err = body.Grants.Validate(); err != nil || len(body.Grants) == 0 {
		return 0, nil, httpError(http.StatusBadRequest, "grants must map tenants to viewer, auditor or admin")
	}
	if !administers(s, body.Grants) {
		return 0, nil, httpError(http.StatusForbidden, "you can grant only tenants you are an admin of")
	}
	secret, tok, err := t.CreateOnRecord(r.Context(), a.Ledger, s.Principal, body.Name, body.Grants, s.User,
		a.Now().Add(time.Duration(body.ExpiresInDays)*24*time.Hour))
	switch {
	case errors.Is(err, auth.ErrTokenExists):
		return 0, nil, httpError(http.StatusConflict, "a service account of that name exists (names are never reused)")
	case errors.Is(err, auth.ErrTokenRequest):
		return 0, nil, httpError(http.StatusBadRequest, err.Error())
	case err != nil:
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"token": secret, "record": tok.At(a.Now())}, nil
}

func (a *api) revokeToken(r *http.Request, s auth.Session) (int, any, error) {
	t, err := a.tokensFile(s)
	if err != nil {
		return 0, nil, err
	}
	tok, ok, err := t.Lookup(r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	if !ok || !administers(s, tok.Grants) {
		return 0, nil, httpError(http.StatusNotFound, "no such token")
	}
	if tok, err = t.RevokeOnRecord(r.Context(), a.Ledger, s.Principal, tok.ID, s.User); err != nil {
		return 0, nil, err
	}
	return http.StatusOK, tok.At(a.Now()), nil
}
