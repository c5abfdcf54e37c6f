package lifecycle

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger"
)

// Kinds of content events.
const (
	// EventDeleted: removed by a deletion job (JobID).
	EventDeleted = "deleted"
	// EventExpired: removed by an expiry run (JobID is the run ID).
	EventExpired = "expired"
	// EventHeld: a legal hold (HoldID) was applied to the object.
	EventHeld = "held"
	// EventReleased: a legal hold (HoldID) no longer applies to the object.
	EventReleased = "released"
)

// Details of content events.
const (
	// DetailNotEnforced: the store cannot hold objects (an S3 bucket
	// without Object Lock); only this package's checks protect it.
	DetailNotEnforced = "not_enforced_by_store"
	// DetailStillHeld: the hold is released, but another active hold
	// covers the object, so the store keeps holding it.
	DetailStillHeld = "still_held_by_another_hold"
	// DetailObjectGone: the object was no longer in the store.
	DetailObjectGone = "object_gone"
)

// ContentEvent is one recorded change of a content object.
type ContentEvent struct {
	Tenant string    `json:"tenant"`
	Ref    string    `json:"ref"`
	Event  string    `json:"event"`
	At     time.Time `json:"at"`
	Actor  string    `json:"actor"`
	JobID  string    `json:"job_id"`
	HoldID string    `json:"hold_id"`
	Detail string    `json:"detail"`
}

// pageSize bounds the objects handled per ledger query and per batch of
// store calls, and so the memory a run needs.
const pageSize = 1000

type refStatus struct {
	// live: a call within content retention and not covered by a deletion
	// request references the object, or a span of such a call's trace does.
	live bool
	// held: a call covered by an active legal hold references it, or a
	// span of such a call's trace does.
	held bool
}

// refStatuses looks up, for objects of one tenant, whether live or held
// calls (or spans of their traces) reference them. Objects nothing
// references are absent.
func (m *Manager) refStatuses(ctx context.Context, tenant string, cutoff time.Time, refs []string) (map[string]refStatus, error) {
	out := make(map[string]refStatus, len(refs))
	for _, list := range refLists(refs) {
		rows, err := query[struct {
			Ref  string `json:"ref"`
			Live uint8  `json:"live"`
			Held uint8  `json:"held"`
		}](ctx, m, "lifecycle_ref_status", map[string]any{"tenant": tenant, "cutoff": cutoff, "refs": list})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.Ref] = refStatus{live: r.Live != 0, held: r.Held != 0}
		}
		if err := m.spanRefStatuses(ctx, tenant, cutoff, list, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// spanRefStatuses adds to out the status of the objects in list that spans
// other than calls reference: such content is live and held as the calls
// of its trace are (span_content_lifecycle). The match is made here, with
// the tenant's scopes, because a query over that view cost 30-40 ms a page
// in fixed costs even when no span held any of the references.
func (m *Manager) spanRefStatuses(ctx context.Context, tenant string, cutoff time.Time, list string, out map[string]refStatus) error {
	spans, err := query[struct {
		Ref       string    `json:"ref"`
		TraceID   string    `json:"trace_id"`
		StartTime time.Time `json:"start_time"`
	}](ctx, m, "lifecycle_span_refs", map[string]any{"tenant": tenant, "refs": list})
	if err != nil || len(spans) == 0 {
		return err
	}
	traces := make([]string, 0, len(spans))
	for _, s := range spans {
		traces = append(traces, s.TraceID)
	}
	slices.Sort(traces)
	calls, err := query[ledger.Call](ctx, m, "lifecycle_trace_calls", map[string]any{"tenant": tenant, "traces": strings.Join(slices.Compact(traces), "\n")})
	if err != nil {
		return err
	}
	scopes, err := query[scopeRow](ctx, m, "lifecycle_scopes", map[string]any{"tenant": tenant})
	if err != nil {
		return err
	}
	// What covers the calls of each trace; a trace without calls covers
	// nothing, as in the view.
	type cover struct{ held, deleted bool }
	byTrace := map[string]cover{}
	for _, c := range calls {
		holds, deletions := covering(scopes, c)
		cv := byTrace[c.TraceID]
		byTrace[c.TraceID] = cover{held: cv.held || len(holds) > 0, deleted: cv.deleted || len(deletions) > 0}
	}
	for _, s := range spans {
		cv, ok := byTrace[s.TraceID]
		if !ok {
			continue
		}
		st := out[s.Ref]
		out[s.Ref] = refStatus{live: st.live || !s.StartTime.Before(cutoff) && !cv.deleted, held: st.held || cv.held}
	}
	return nil
}

// maxRefListBytes bounds a newline-separated list of references put into
// one query: ClickHouse refuses query text over max_query_size (256 KiB by
// default), and references of long tenant names are over 300 bytes.
const maxRefListBytes = 192 << 10

// refLists joins references with newlines into lists of at most
// maxRefListBytes each.
func refLists(refs []string) []string {
	var out []string
	var b strings.Builder
	for _, r := range refs {
		if b.Len() > 0 && b.Len()+1+len(r) > maxRefListBytes {
			out = append(out, b.String())
			b.Reset()
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(r)
	}
	if b.Len() > 0 {
		out = append(out, b.String())
	}
	return out
}

// disposal is what became of a batch of objects.
type disposal struct {
	live, held, deleted uint64
	// removed are the objects this batch deleted (not those already gone).
	removed []contentstore.Ref
}

// dispose deletes the objects of one tenant that no live call references
// and no hold covers; in a dry run it only counts. An object already gone
// counts as deleted, one the store refuses for a legal hold as held. On an
// error the disposal so far is returned with it.
func (m *Manager) dispose(ctx context.Context, tenant string, cutoff time.Time, refs []contentstore.Ref, dryRun bool) (disposal, error) {
	var d disposal
	if len(refs) == 0 {
		return d, nil
	}
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = r.String()
	}
	var f fence
	if !dryRun {
		// Recorded before the holds are read, so that a hold recorded
		// after that read waits for this batch (fence.go).
		var err error
		if f, err = m.beginDisposal(ctx, tenant); err != nil {
			return d, err
		}
		defer m.endDisposal(ctx, f)
	}
	status, err := m.refStatuses(ctx, tenant, cutoff, names)
	if err != nil {
		return d, err
	}
	for i, ref := range refs {
		st := status[names[i]]
		switch {
		case st.live:
			d.live++
			continue
		case st.held:
			d.held++
			continue
		case dryRun:
			d.deleted++
			continue
		}
		if err := f.mayDelete(); err != nil {
			return d, err
		}
		err := m.content.Delete(ctx, ref)
		switch {
		case err == nil:
			d.deleted++
			d.removed = append(d.removed, ref)
		case errors.Is(err, contentstore.ErrNotFound):
			d.deleted++
		case errors.Is(err, contentstore.ErrLegalHold):
			d.held++
		default:
			return d, err
		}
	}
	return d, nil
}

// recordEvents appends one event per object.
func (m *Manager) recordEvents(ctx context.Context, refs []contentstore.Ref, tmpl ContentEvent) error {
	if len(refs) == 0 {
		return nil
	}
	events := make([]ContentEvent, len(refs))
	for i, r := range refs {
		e := tmpl
		e.Tenant, e.Ref, e.At = r.Tenant, r.String(), m.stamp()
		events[i] = e
	}
	return insert(ctx, m, "lifecycle_insert_content_events", events...)
}

// tenantRefs parses the references of a ledger page, keeping the objects of
// the tenant. A span may carry a reference of another system or, crafted,
// of another tenant: neither is this tenant's object to delete or hold.
func tenantRefs(tenant string, page []string) []contentstore.Ref {
	out := make([]contentstore.Ref, 0, len(page))
	for _, s := range page {
		if r, err := contentstore.ParseRef(s); err == nil && r.Tenant == tenant {
			out = append(out, r)
		}
	}
	return out
}

// refPage is one row of a query that pages through references.
type refPage struct {
	Ref string `json:"ref"`
}

// eachRefPage calls fn with successive pages of a named query that takes
// "after" and "limit" besides params, until a page comes back empty.
func (m *Manager) eachRefPage(ctx context.Context, name string, params map[string]any, fn func([]string) error) error {
	after := ""
	for {
		p := map[string]any{"after": after, "limit": pageSize}
		for k, v := range params {
			p[k] = v
		}
		rows, err := query[refPage](ctx, m, name, p)
		if err != nil || len(rows) == 0 {
			return err
		}
		page := make([]string, len(rows))
		for i, r := range rows {
			page[i] = r.Ref
		}
		if err := fn(page); err != nil {
			return err
		}
		after = page[len(page)-1]
	}
}
