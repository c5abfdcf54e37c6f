package api

import (
	"net/http"
	"strconv"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/views"
	"github.com/docketlabs/docket/ui/auth"
)

// filter reads the ledger filters shared by the list, cost and chart
// endpoints, narrowed to the session's tenants.
func filter(r *http.Request, s auth.Session) (views.Filter, error) {
	q := r.URL.Query()
	f := views.Filter{Tenants: s.Tenants(access.RoleViewer), Tenant: q.Get("tenant"), Service: q.Get("service"),
		Model: q.Get("model"), Provider: q.Get("provider"), Status: q.Get("status")}
	var err error
	if f.From, err = timeParam(r, "from"); err != nil {
		return f, err
	}
	if f.To, err = timeParam(r, "to"); err != nil {
		return f, err
	}
	return f, f.Validate()
}

func (a *api) calls(r *http.Request, s auth.Session) (int, any, error) {
	f, err := filter(r, s)
	if err != nil {
		return 0, nil, err
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	calls, next, err := views.ListCalls(r.Context(), a.Ledger, f, limit, r.URL.Query().Get("before"))
	if err != nil {
		return 0, nil, err
	}
	if calls == nil {
		calls = []views.CallSummary{}
	}
	return http.StatusOK, map[string]any{"calls": calls, "next": next}, nil
}

func (a *api) facets(r *http.Request, s auth.Session) (int, any, error) {
	f, err := filter(r, s)
	if err != nil {
		return 0, nil, err
	}
	v, err := views.Facets(r.Context(), a.Ledger, f)
	return http.StatusOK, v, err
}

func (a *api) costs(r *http.Request, s auth.Session) (int, any, error) {
	f, err := filter(r, s)
	if err != nil {
		return 0, nil, err
	}
	v, err := views.Costs(r.Context(), a.Ledger, f, r.URL.Query().Get("group"))
	return http.StatusOK, v, err
}

func (a *api) timeseries(r *http.Request, s auth.Session) (int, any, error) {
	f, err := filter(r, s)
	if err != nil {
		return 0, nil, err
	}
	v, err := views.Timeseries(r.Context(), a.Ledger, f, r.URL.Query().Get("bucket"))
	return http.StatusOK, v, err
}

func (a *api) latency(r *http.Request, s auth.Session) (int, any, error) {
	f, err := filter(r, s)
	if err != nil {
		return 0, nil, err
	}
	v, err := views.Latency(r.Context(), a.Ledger, f)
	return http.StatusOK, v, err
}

// stats counts all stored calls; it is for operators checking ingestion,
// so it needs a grant of every tenant.
func (a *api) stats(r *http.Request, s auth.Session) (int, any, error) {
	if !auth.Covers(s.Tenants(access.RoleViewer), access.AllTenants) {
		return 0, nil, httpError(http.StatusForbidden, "ledger totals need a grant of all tenants")
	}
	v, err := a.Ledger.CountCalls(r.Context())
	return http.StatusOK, v, err
}
