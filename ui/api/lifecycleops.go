package api

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/lifecycle"
	"github.com/docketlabs/docket/ui/auth"
)

// The lifecycle operations `docket lifecycle --server` needs beyond the
// admin pages' own. Each acts as the session through the lifecycle
// Manager, which checks role and tenant and records the attempt.

// long serves h, whose work may outlast the write timeout (a deletion
// job, an expiry run over every tenant, creating or releasing a hold).
func (a *api) long(min access.Role, h handler) http.Handler {
	return a.allowedStream(min, func(w http.ResponseWriter, r *http.Request, s auth.Session) error {
		out := extendWrites(w, r)
		code, v, err := h(r, s)
		if err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		return json.NewEncoder(out).Encode(v)
	})
}

// runDeletion runs a deletion job again (idempotent) and answers with it
// once it ends.
func (a *api) runDeletion(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	job, err := m.RunDeletion(r.Context(), s.As(access.RoleAdmin), r.PathValue("id"))
	if job.ID == "" && err != nil {
		return 0, nil, err
	}
	// A job that ran and failed is an answer, not a transport error.
	return http.StatusOK, map[string]any{"job": job, "error": errText(err)}, nil
}

// expire applies retention now, with this server's policy.
func (a *api) expire(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	var body struct {
		DryRun bool   `json:"dry_run"`
		Tenant string `json:"tenant"`
		Reason string `json:"reason"`
	}
	if err = decode(r, &body); err != nil {
		return 0, nil, err
	}
	p := s.As(access.RoleAdmin)
	if body.Tenant != "" {
		p = s.Principal(body.Tenant)
	}
	run, err := m.Expire(r.Context(), p, lifecycle.ExpireOptions{DryRun: body.DryRun, Tenant: body.Tenant, Reason: body.Reason})
	if run.ID == "" && err != nil {
		return 0, nil, err
	}
	return http.StatusOK, map[string]any{"run": run, "error": errText(err)}, nil
}

func (a *api) contentEvents(r *http.Request, s auth.Session) (int, any, error) {
	m, err := a.lifecycleManager()
	if err != nil {
		return 0, nil, err
	}
	q := r.URL.Query()
	limit, _ := strconv.ParseUint(q.Get("limit"), 10, 64)
	events, err := m.ContentEvents(r.Context(), s.As(access.RoleAdmin),
		lifecycle.EventFilter{Tenant: q.Get("tenant"), Ref: q.Get("ref"), JobID: q.Get("job"), HoldID: q.Get("hold"), Limit: limit})
	if err != nil {
		return 0, nil, err
	}
	if events == nil {
		events = []lifecycle.ContentEvent{}
	}
	return http.StatusOK, map[string]any{"events": events}, nil
}

// errText is err's words, "" for none; lifecycle errors carry no content.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
