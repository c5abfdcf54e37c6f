package lifecycle

import (
	"context"
	"slices"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
)

// EventFilter selects content events; empty fields select all.
type EventFilter struct {
	Tenant string
	Ref    string
	JobID  string
	HoldID string
	// Limit caps the result (default 1000).
	Limit uint64
}

// ContentEvents lists recorded content events, oldest first, of the
// tenants p may see.
func (m *Manager) ContentEvents(ctx context.Context, p access.Principal, f EventFilter) ([]ContentEvent, error) {
	if f.Limit == 0 {
		f.Limit = 1000
	}
	var out []ContentEvent
	err := eachReadableTenant(p, f.Tenant, func(tenant string) error {
		rows, err := query[ContentEvent](ctx, m, "lifecycle_content_events",
			map[string]any{"tenant": tenant, "ref": f.Ref, "job_id": f.JobID, "hold_id": f.HoldID, "limit": f.Limit})
		out = append(out, rows...)
		return err
	})
	return out, err
}

// CallState is the lifecycle state of one ledger call: until when its
// content and its row are retained, the holds and deletion requests that
// cover it, and what happened to each object it references. It is what the
// evidence page shows when content is not available ("deleted on request
// at T", "expired at T", "on legal hold H").
type CallState struct {
	TraceID   string    `json:"trace_id"`
	SpanID    string    `json:"span_id"`
	StartTime time.Time `json:"start_time"`
	// ContentRetainedUntil: the call stops keeping its content then,
	// unless held.
	ContentRetainedUntil time.Time `json:"content_retained_until"`
	// LedgerRetainedUntil: the row expires then, unless held.
	LedgerRetainedUntil time.Time  `json:"ledger_retained_until"`
	HoldIDs             []string   `json:"hold_ids"`
	DeletionJobIDs      []string   `json:"deletion_job_ids"`
	Objects             []RefState `json:"objects"`
}

// RefState is the recorded history of one referenced object.
type RefState struct {
	Ref    string         `json:"ref"`
	Events []ContentEvent `json:"events"`
}

// CallStates returns the lifecycle state of calls the caller has read
// (the evidence page's calls of one trace): calls of other tenants than
// tenant are left out. Holds and deletion requests are matched to them here
// rather than by reading them again through call_lifecycle, which would
// cost a second FINAL lookup of the trace.
func (m *Manager) CallStates(ctx context.Context, p access.Principal, tenant string, calls []ledger.Call) ([]CallState, error) {
	if err := mayRead(p, tenant); err != nil {
		return nil, err
	}
	calls = slices.DeleteFunc(slices.Clone(calls), func(c ledger.Call) bool { return c.Tenant != tenant })
	if len(calls) == 0 {
		return nil, nil
	}
	scopes, err := query[scopeRow](ctx, m, "lifecycle_scopes", map[string]any{"tenant": tenant})
	if err != nil {
		return nil, err
	}
	ret := m.policy.For(tenant)
	out := make([]CallState, len(calls))
	var refs []string
	for i, c := range calls {
		start := c.StartTime.UTC()
		s := CallState{TraceID: c.TraceID, SpanID: c.SpanID, StartTime: start,
			ContentRetainedUntil: start.AddDate(0, 0, ret.ContentDays), LedgerRetainedUntil: start.AddDate(0, 0, ret.LedgerDays),
			Objects: []RefState{}}
		s.HoldIDs, s.DeletionJobIDs = covering(scopes, c)
		callRefs := c.Refs()
		for _, r := range callRefs {
			s.Objects = append(s.Objects, RefState{Ref: r, Events: []ContentEvent{}})
		}
		// Events exist only for this tenant's objects; other strings a span
		// carried as a reference are not looked up.
		for _, r := range tenantRefs(tenant, callRefs) {
			refs = append(refs, r.String())
		}
		out[i] = s
	}
	byRef := map[string][]ContentEvent{}
	for _, list := range refLists(refs) {
		events, err := query[ContentEvent](ctx, m, "lifecycle_ref_events", map[string]any{"tenant": tenant, "refs": list})
		if err != nil {
			return nil, err
		}
		for _, e := range events {
			byRef[e.Ref] = append(byRef[e.Ref], e)
		}
	}
	for _, s := range out {
		for j, o := range s.Objects {
			if events, ok := byRef[o.Ref]; ok {
				s.Objects[j].Events = events
			}
		}
	}
	return out, nil
}

// Kinds of scopeRow.
const (
	scopeHold     = "hold"
	scopeDeletion = "deletion"
)

// scopeRow is an active legal hold or a deletion request of one tenant
// (lifecycle_scopes.sql).
type scopeRow struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
	scopeCols
}

// covering returns the IDs of the holds and of the deletion requests among
// scopes that cover c.
func covering(scopes []scopeRow, c ledger.Call) (holds, deletions []string) {
	holds, deletions = []string{}, []string{}
	for _, sc := range scopes {
		if !sc.covers(c) {
			continue
		}
		switch sc.Kind {
		case scopeHold:
			holds = append(holds, sc.ID)
		case scopeDeletion:
			deletions = append(deletions, sc.ID)
		}
	}
	return holds, deletions
}

// covers is the call_lifecycle view's match of a call to a stored scope:
// an empty end user or trace matches any, and the call started in
// [from, to).
func (s scopeCols) covers(c ledger.Call) bool {
	return (s.EndUserRef == "" || s.EndUserRef == c.EndUserRef) && (s.TraceID == "" || s.TraceID == c.TraceID) &&
		!c.StartTime.Before(s.FromTime) && c.StartTime.Before(s.ToTime)
}
