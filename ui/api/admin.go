package api

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/audit"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/ui/auth"
)

// adminTenants is the tenant asked for, or every tenant the session
// administers ("" standing for all when it administers all).
func adminTenants(r *http.Request, s auth.Session) ([]string, error) {
	granted := s.Tenants(access.RoleAdmin)
	if t := r.URL.Query().Get("tenant"); t != "" {
		if !auth.Covers(granted, t) {
			return nil, httpError(http.StatusForbidden, "you are not an admin of that tenant")
		}
		return []string{t}, nil
	}
	if auth.Covers(granted, access.AllTenants) {
		return []string{""}, nil
	}
	return granted, nil
}

func (a *api) lifecycleManager() (*lifecycle.Manager, error) {
	if a.Lifecycle == nil {
		return nil, httpError(http.StatusServiceUnavailable, "holds and deletions need a content store; none is configured for this UI")
	}
	return a.Lifecycle, nil
}

// perTenant gathers list over the tenants the request names or the
// session administers, newest first by the given time.
func perTenant[T any](r *http.Request, s auth.Session, list func(tenant string) ([]T, error), at func(T) time.Time) ([]T, error) {
	tenants, err := adminTenants(r, s)
	if err != nil {
		return nil, err
	}
	out := []T{}
	for _, t := range tenants {
		items, err := list(t)
		if err != nil {
			return nil, err
		}
		out = append(out, items...)
	}
	slices.SortFunc(out, func(x, y T) int { return at(y).Compare(at(x)) })
	return out, nil
}

func (a *api) holds(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	holds, err := perTenant(r, s, func(t string) ([]lifecycle.Hold, error) {
		return m.Holds(r.Context(), s.As(access.RoleAdmin), lifecycle.HoldFilter{Tenant: t, Status: r.URL.Query().Get("status")})
	}, func(h lifecycle.Hold) time.Time { return h.CreatedAt })
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"holds": holds}, nil
}

// lifecycleStatus is the background runner's state and the latest expiry
// runs (an interrupted one included).
func (a *api) lifecycleStatus(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	limit, _ := strconv.ParseUint(r.URL.Query().Get("limit"), 10, 64)
	if limit == 0 || limit > 1000 {
		limit = 20
	}
	runs, err := m.ExpiryRuns(r.Context(), s.As(access.RoleAdmin), limit)
	if err != nil {
		return 0, nil, err
	}
	if runs == nil {
		runs = []lifecycle.ExpiryRun{}
	}
	var runner *lifecycle.RunnerStatus
	if a.Runner != nil {
		st := a.Runner.Status()
		runner = &st
	}
	return http.StatusOK, map[string]any{"runner": runner, "expiry_runs": runs}, nil
}

func (a *api) createHold(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	var req lifecycle.HoldRequest
	if err = decode(r, &req); err != nil {
		return 0, nil, err
	}
	hold, applied, err := m.CreateHold(r.Context(), s.Principal(req.Scope.Tenant), req)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, map[string]any{"hold": hold, "applied": applied}, nil
}

func (a *api) releaseHold(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	var body struct {
		Reason string `json:"reason"`
	}
	if err = decode(r, &body); err != nil {
		return 0, nil, err
	}
	res, err := m.ReleaseHold(r.Context(), s.As(access.RoleAdmin), r.PathValue("id"), body.Reason)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, res, nil
}

func (a *api) deletions(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	jobs, err := perTenant(r, s, func(t string) ([]lifecycle.DeletionJob, error) {
		return m.DeletionJobs(r.Context(), s.As(access.RoleAdmin), lifecycle.JobFilter{Tenant: t, Status: r.URL.Query().Get("status")})
	}, func(j lifecycle.DeletionJob) time.Time { return j.RequestedAt })
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"jobs": jobs}, nil
}

// createDeletion records the request and carries it out in the
// background; its progress is read with GET /api/v1/deletions/{id}. A
// job interrupted by a restart is resumed by `docket lifecycle`.
func (a *api) createDeletion(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	var req lifecycle.DeletionRequest
	if err = decode(r, &req); err != nil {
		return 0, nil, err
	}
	job, run, err := m.SubmitDeletion(r.Context(), s.Principal(req.Scope.Tenant), req)
	if err != nil {
		return 0, nil, err
	}
	go func() {
		if _, err := run(context.WithoutCancel(r.Context())); err != nil {
			a.Logger.Error("deletion job failed; see its recorded state", "job", job.ID, "err", err)
		}
	}()
	return http.StatusAccepted, map[string]any{"job": job}, nil
}

func (a *api) deletion(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	job, history, err := m.DeletionJob(r.Context(), s.As(access.RoleAdmin), r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"job": job, "history": history}, nil
}

// accessActions are the actions the access log records, each declared by
// the package that records it; the page offers them as filter values.
var accessActions = []string{access.ActionReveal, access.ActionView, replay.ActionReplay, audit.ActionExport,
	lifecycle.ActionHoldCreate, lifecycle.ActionHoldRelease, lifecycle.ActionDeleteRequest, lifecycle.ActionDeleteRun,
	lifecycle.ActionExpire, access.ActionTokenCreate, access.ActionTokenRevoke}

func (a *api) accessLog(r *http.Request, s auth.Session) (int, any, error) {
	q := r.URL.Query()
	since, err := timeParam(r, "since")
	if err != nil {
		return 0, nil, err
	}
	limit, _ := strconv.ParseUint(q.Get("limit"), 10, 64)
	if limit == 0 || limit > 5000 {
		limit = 200
	}
	entries, err := perTenant(r, s, func(t string) ([]ledgerstore.AccessEntry, error) {
		return a.Ledger.AccessLog(r.Context(), ledgerstore.AccessFilter{Tenant: t, Actor: q.Get("actor"), Action: q.Get("action"),
			Outcome: q.Get("outcome"), Since: since, Limit: limit})
	}, func(e ledgerstore.AccessEntry) time.Time { return e.At })
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"entries": entries[:min(len(entries), int(limit))], "actions": accessActions}, nil
}
