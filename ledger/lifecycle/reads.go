package lifecycle

import (
	"context"
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

// CallStates returns the lifecycle state of every call of a trace.
func (m *Manager) CallStates(ctx context.Context, p access.Principal, tenant, traceID string) ([]CallState, error) {
	if err := mayRead(p, tenant); err != nil {
		return nil, err
	}
	if !ledger.ValidTraceID(traceID) {
		return nil, invalid("trace_id must be 32 lowercase hex digits, not all zero")
	}
	calls, err := query[struct {
		TraceID        string    `json:"trace_id"`
		SpanID         string    `json:"span_id"`
		StartTime      time.Time `json:"start_time"`
		Refs           []string  `json:"refs"`
		HoldIDs        []string  `json:"hold_ids"`
		DeletionJobIDs []string  `json:"deletion_job_ids"`
	}](ctx, m, "lifecycle_trace_calls", map[string]any{"tenant": tenant, "trace_id": traceID})
	if err != nil || len(calls) == 0 {
		return nil, err
	}
	// Events exist only for this tenant's objects; other strings a span
	// carried as a reference are not looked up.
	var refs []string
	for _, c := range calls {
		for _, r := range tenantRefs(tenant, c.Refs) {
			refs = append(refs, r.String())
		}
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
	ret := m.policy.For(tenant)
	out := make([]CallState, len(calls))
	for i, c := range calls {
		start := c.StartTime.UTC()
		s := CallState{TraceID: c.TraceID, SpanID: c.SpanID, StartTime: start,
			ContentRetainedUntil: start.AddDate(0, 0, ret.ContentDays), LedgerRetainedUntil: start.AddDate(0, 0, ret.LedgerDays),
			HoldIDs: c.HoldIDs, DeletionJobIDs: c.DeletionJobIDs, Objects: make([]RefState, len(c.Refs))}
		for j, r := range c.Refs {
			s.Objects[j] = RefState{Ref: r, Events: byRef[r]}
			if s.Objects[j].Events == nil {
				s.Objects[j].Events = []ContentEvent{}
			}
		}
		out[i] = s
	}
	return out, nil
}
