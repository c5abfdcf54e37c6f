package api

import (
	"net/http"
	"slices"
	"time"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ui/auth"
)

// completenessBody is where each granted tenant's calls went: the
// collector's account (when the UI runs in the collector) and what the
// ledger holds of the calls received in the same range.
type completenessBody struct {
	// Collector is nil when no collector runs in this process.
	Collector *completeness.Snapshot     `json:"collector"`
	From      time.Time                  `json:"from"`
	To        time.Time                  `json:"to"`
	Ledger    []ledgerstore.TenantCounts `json:"ledger"`
}

// completenessReport answers GET /api/v1/completeness?from=&to=. The range
// defaults to the collector's account (since it started) up to now, so
// both sides count the same calls.
func (a *api) completenessReport(r *http.Request, s auth.Session) (int, any, error) {
	granted := s.Tenants(access.RoleViewer)
	keep := func(tenant string) bool { return auth.Covers(granted, tenant) }
	var b completenessBody
	if a.Account != nil {
		snap := a.Account.Snapshot(keep)
		b.Collector = &snap
	}
	var err error
	if b.From, err = timeParam(r, "from"); err != nil {
		return 0, nil, err
	}
	if b.To, err = timeParam(r, "to"); err != nil {
		return 0, nil, err
	}
	if b.To.IsZero() {
		b.To = a.Now().UTC().Add(time.Minute)
	}
	if b.From.IsZero() {
		if b.From = b.To.AddDate(0, 0, -1); b.Collector != nil {
			b.From = b.Collector.Since.Truncate(time.Second)
		}
	}
	if !b.From.Before(b.To) {
		return 0, nil, httpError(http.StatusBadRequest, "from must be before to")
	}
	if b.Ledger, err = a.Ledger.CountByTenant(r.Context(), b.From, b.To); err != nil {
		return 0, nil, err
	}
	b.Ledger = slices.DeleteFunc(b.Ledger, func(t ledgerstore.TenantCounts) bool { return !keep(t.Tenant) })
	return http.StatusOK, b, nil
}
