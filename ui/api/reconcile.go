package api

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/reconcile"
	"github.com/docketlabs/docket/ui/auth"
)

// reconcileDays is the range shown when none is asked for: the last week.
const reconcileDays = 7

// reconcileReport compares the ledger with the imported provider usage
// reports. A provider bills the whole organization, so the ledger side
// counts every tenant's calls: it needs a grant of all tenants, like the
// ledger totals.
func (a *api) reconcileReport(r *http.Request, s auth.Session) (int, any, error) {
	if !auth.Covers(s.Tenants(access.RoleViewer), access.AllTenants) {
		return 0, nil, httpError(http.StatusForbidden, "reconciliation counts every tenant's calls: it needs a grant of all tenants")
	}
	q := r.URL.Query()
	from, err := timeParam(r, "from")
	if err != nil {
		return 0, nil, err
	}
	to, err := timeParam(r, "to")
	if err != nil {
		return 0, nil, err
	}
	if to.IsZero() {
		to = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	}
	if from.IsZero() {
		from = to.AddDate(0, 0, -reconcileDays)
	}
	o := reconcile.Options{From: from, To: to, Provider: q.Get("provider")}
	if t := q.Get("tolerance"); t != "" {
		if o.TolerancePercent, err = strconv.ParseFloat(t, 64); err != nil || o.TolerancePercent <= 0 {
			return 0, nil, httpError(http.StatusBadRequest, "tolerance must be a positive percentage")
		}
	}
	rep, err := reconcile.Reconcile(r.Context(), a.Ledger, o)
	if errors.Is(err, reconcile.ErrInvalid) {
		return 0, nil, httpError(http.StatusBadRequest, err.Error())
	}
	if err != nil {
		return 0, nil, err
	}
	imports, err := usage.Imports(r.Context(), a.Ledger, o.Provider, 20)
	if err != nil {
		return 0, nil, err
	}
	if imports == nil {
		imports = []usage.Import{}
	}
	return http.StatusOK, map[string]any{"report": rep, "imports": imports}, nil
}

// maxUpload bounds a usage export sent through the UI.
const maxUpload = 32 << 20

// importUsage takes a provider's usage CSV export in the body (text/csv),
// for deployments whose embedded ledger cannot be opened by `docket usage
// import` while the collector runs. Provider reports are the organization's,
// so it needs the admin role for all tenants.
func (a *api) importUsage(r *http.Request, s auth.Session) (int, any, error) {
	if !auth.Covers(s.Tenants(access.RoleAdmin), access.AllTenants) {
		return 0, nil, httpError(http.StatusForbidden, "importing a provider's usage report needs the admin role for all tenants")
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		return 0, nil, httpError(http.StatusUnsupportedMediaType, "send the CSV export as text/csv")
	}
	q := r.URL.Query()
	name := q.Get("name")
	if name == "" || len(name) > 200 || !utf8.ValidString(name) || strings.ContainsAny(name, "/\\\x00\r\n") {
		return 0, nil, httpError(http.StatusBadRequest, "name must be the export's file name (up to 200 characters, no path)")
	}
	body := http.MaxBytesReader(nil, r.Body, maxUpload)
	imp, err := usage.ImportCSV(r.Context(), a.Ledger, q.Get("provider"), name, body, s.User)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return 0, nil, httpError(http.StatusRequestEntityTooLarge, "the export is larger than 32 MiB; use docket usage import")
	case errors.Is(err, usage.ErrInvalid):
		return 0, nil, httpError(http.StatusBadRequest, err.Error())
	case err != nil:
		return 0, nil, err
	}
	return http.StatusCreated, imp, nil
}
