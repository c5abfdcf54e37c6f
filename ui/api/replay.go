package api

import (
	"errors"
	"net/http"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/replay"
	"github.com/docketlabs/docket/replay/runs"
	"github.com/docketlabs/docket/ui/auth"
)

// replayRequest is the body of POST /api/v1/replays.
type replayRequest struct {
	TraceID    string `json:"trace_id"`
	SpanID     string `json:"span_id"`
	N          int    `json:"n"`
	MaxCostUSD string `json:"max_cost_usd"`
	Reason     string `json:"reason"`
}

// startReplay starts a distribution replay of one call in the background,
// as the session's person in the call's tenant; the page polls its status.
func (a *api) startReplay(r *http.Request, s auth.Session) (int, any, error) {
	if a.Replays == nil {
		return 0, nil, httpError(http.StatusServiceUnavailable, "replay is not configured for this UI")
	}
	var body replayRequest
	if err := decode(r, &body); err != nil {
		return 0, nil, err
	}
	id, err := replay.ParseCallID(body.TraceID + ":" + body.SpanID)
	if err != nil {
		return 0, nil, httpError(http.StatusBadRequest, err.Error())
	}
	calls, err := a.Ledger.CallsByTrace(r.Context(), id.TraceID)
	if err != nil {
		return 0, nil, err
	}
	granted := s.Tenants(access.RoleViewer)
	i := -1
	for j, c := range calls {
		if c.SpanID == id.SpanID && auth.Covers(granted, c.Tenant) {
			i = j
		}
	}
	if i < 0 {
		return 0, nil, httpError(http.StatusNotFound, "no such call in your tenants")
	}
	tenant := calls[i].Tenant
	st, err := a.Replays.Start(s.Principal(tenant), tenant, runs.Request{Call: id, N: body.N, MaxCostUSD: body.MaxCostUSD, Reason: body.Reason})
	switch {
	case errors.Is(err, runs.ErrInvalid):
		return 0, nil, httpError(http.StatusBadRequest, err.Error())
	case errors.Is(err, runs.ErrBusy):
		return 0, nil, httpError(http.StatusConflict, err.Error())
	case err != nil:
		return 0, nil, err
	}
	return http.StatusAccepted, st, nil
}

func (a *api) replayStatus(r *http.Request, s auth.Session) (int, any, error) {
	return a.replayRun(r, s, a.Replays.Get)
}

func (a *api) cancelReplay(r *http.Request, s auth.Session) (int, any, error) {
	return a.replayRun(r, s, a.Replays.Cancel)
}

// replayRun answers the status of a run the session's person started;
// others' runs are not found.
func (a *api) replayRun(r *http.Request, s auth.Session, op func(user, id string) (runs.Status, bool)) (int, any, error) {
	if a.Replays == nil {
		return 0, nil, httpError(http.StatusNotFound, "no such replay run")
	}
	st, ok := op(s.User, r.PathValue("id"))
	if !ok {
		return 0, nil, httpError(http.StatusNotFound, "no such replay run")
	}
	return http.StatusOK, st, nil
}

// replayLimits tells the page's form the bounds of a run started here.
func (a *api) replayLimits(*http.Request, auth.Session) (int, any, error) {
	if a.Replays == nil {
		return http.StatusOK, map[string]any{"enabled": false}, nil
	}
	l := a.Replays.Limits()
	return http.StatusOK, map[string]any{"enabled": true, "max_n": l.MaxN, "max_cost_usd": l.MaxCostUSD, "timeout_seconds": l.Timeout.Seconds()}, nil
}
