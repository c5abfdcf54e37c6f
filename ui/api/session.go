package api

import (
	"net/http"

	"github.com/docketlabs/docket/ui/auth"
)

func (a *api) session(w http.ResponseWriter, r *http.Request) {
	s, err := a.Auth.Identify(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

func (a *api) signIn(w http.ResponseWriter, r *http.Request) {
	var body struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	if err := decode(r, &body); err != nil {
		a.fail(w, r, err)
		return
	}
	// The password check may wait for a KDF worker (bounded by its queue).
	extendWrites(w, r)
	s, err := a.Auth.SignIn(w, r, body.User, body.Password)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s)
}

// signOut ends the session and clears its cookie; like every state
// change it needs the CSRF token, so no other site can sign people out.
func (a *api) signOut(w http.ResponseWriter, r *http.Request) {
	s, err := a.Auth.Identify(r)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !a.Auth.CheckCSRF(r, s) {
		writeError(w, http.StatusForbidden, "missing or wrong CSRF token")
		return
	}
	a.Auth.SignOut(w, s)
	w.WriteHeader(http.StatusNoContent)
}

func (a *api) changePassword(r *http.Request, s auth.Session) (int, any, error) {
	var body struct {
		Current string `json:"current"`
		New     string `json:"new"`
	}
	if err := decode(r, &body); err != nil {
		return 0, nil, err
	}
	if err := a.Auth.ChangePassword(r, s, body.Current, body.New); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
