package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/access"
)

// Hold states.
const (
	HoldActive   = "active"
	HoldReleased = "released"
)

// ErrNotFound is returned for a hold or job ID that is not on record.
var ErrNotFound = errors.New("lifecycle: not found")

// Hold is a legal hold: while active, nothing its scope covers — the calls'
// content objects and their ledger rows — expires or is deleted.
type Hold struct {
	ID            string     `json:"hold_id"`
	Scope         Scope      `json:"scope"`
	Reason        string     `json:"reason"`
	CreatedBy     string     `json:"created_by"`
	CreatedAt     time.Time  `json:"created_at"`
	Status        string     `json:"status"`
	ReleasedBy    string     `json:"released_by,omitempty"`
	ReleasedAt    *time.Time `json:"released_at,omitempty"`
	ReleaseReason string     `json:"release_reason,omitempty"`
}

type holdRow struct {
	HoldID string `json:"hold_id"`
	scopeCols
	Reason        string     `json:"reason"`
	CreatedBy     string     `json:"created_by"`
	CreatedAt     time.Time  `json:"created_at"`
	Status        string     `json:"status"`
	ReleasedBy    string     `json:"released_by"`
	ReleasedAt    *time.Time `json:"released_at"`
	ReleaseReason string     `json:"release_reason"`
	At            time.Time  `json:"at"`
}

func (h Hold) row(at time.Time) holdRow {
	return holdRow{HoldID: h.ID, scopeCols: h.Scope.cols(), Reason: h.Reason, CreatedBy: h.CreatedBy, CreatedAt: h.CreatedAt,
		Status: h.Status, ReleasedBy: h.ReleasedBy, ReleasedAt: h.ReleasedAt, ReleaseReason: h.ReleaseReason, At: at}
}

func (r holdRow) hold() Hold {
	return Hold{ID: r.HoldID, Scope: r.scope(), Reason: r.Reason, CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt.UTC(),
		Status: r.Status, ReleasedBy: r.ReleasedBy, ReleasedAt: r.ReleasedAt, ReleaseReason: r.ReleaseReason}
}

// HoldRequest asks for a legal hold.
type HoldRequest struct {
	Scope  Scope
	Reason string
}

// HoldApplied counts what applying a hold to the store did.
type HoldApplied struct {
	// ObjectsHeld: objects the store now holds.
	ObjectsHeld uint64 `json:"objects_held"`
	// ObjectsNotEnforced: objects of a store without legal hold support;
	// they are protected by this package's checks only.
	ObjectsNotEnforced uint64 `json:"objects_not_enforced"`
	// ObjectsMissing: referenced objects no longer in the store.
	ObjectsMissing uint64 `json:"objects_missing"`
}

// CreateHold puts everything in the scope on legal hold. The hold is in
// force once recorded and the batches of deletions that read the holds
// before it have ended (fence.go), which CreateHold waits for; it is then
// applied to the objects the covered calls reference, so the store itself
// refuses to delete them. Calls that arrive later are covered too (their
// objects are held at the next sync, and the checks of deletion and expiry
// see them at once). If applying fails, the hold is returned with the
// error; the next run of a deletion job, an expiry or the background
// runner completes it.
func (m *Manager) CreateHold(ctx context.Context, p access.Principal, req HoldRequest) (Hold, HoldApplied, error) {
	scope, bad := req.Scope.normalize()
	if bad == nil {
		bad = checkReason(req.Reason)
	}
	id := newID("hold_")
	a := attempt{action: ActionHoldCreate, tenant: req.Scope.Tenant, traceID: req.Scope.TraceID, reason: req.Reason, detail: id}
	if err := m.authorize(ctx, p, a, bad); err != nil {
		return Hold{}, HoldApplied{}, err
	}
	m.holdMu.Lock()
	defer m.holdMu.Unlock()
	now := m.stamp()
	h := Hold{ID: id, Scope: scope, Reason: strings.TrimSpace(req.Reason), CreatedBy: p.User, CreatedAt: now, Status: HoldActive}
	if err := insert(ctx, m, "lifecycle_insert_hold", h.row(now)); err != nil {
		m.recordFailure(ctx, p, a)
		return Hold{}, HoldApplied{}, err
	}
	m.logger.Info("legal hold created", "hold_id", id, "actor", p.User)
	// Batches of deletions that read the holds before this one was
	// recorded may still be deleting; the hold is in force once they end.
	if err := m.awaitDisposals(ctx, scope.Tenant); err != nil {
		return h, HoldApplied{}, fmt.Errorf("lifecycle: hold %s is recorded; waiting for deletions under way: %w", id, err)
	}
	applied, err := m.applyHold(ctx, h, p.User)
	if err != nil {
		return h, applied, fmt.Errorf("lifecycle: hold %s is in force; applying it to the store failed and is retried by the next sync: %w", id, err)
	}
	return h, applied, nil
}

// ReleaseResult is what releasing a hold did.
type ReleaseResult struct {
	Hold Hold `json:"hold"`
	// ObjectsReleased: objects the store no longer holds.
	ObjectsReleased uint64 `json:"objects_released"`
	// ObjectsStillHeld: objects another active hold keeps held.
	ObjectsStillHeld uint64 `json:"objects_still_held"`
	// Resumed are the deletion jobs of the tenant that were blocked by a
	// hold and ran again.
	Resumed []DeletionJob `json:"resumed"`
}

// ReleaseHold ends a legal hold, lifts it from the objects no other active
// hold covers, and runs again the tenant's deletion jobs that holds
// blocked. Releasing a released hold completes what an interrupted release
// left undone and records nothing new.
func (m *Manager) ReleaseHold(ctx context.Context, p access.Principal, holdID, reason string) (ReleaseResult, error) {
	bad := checkReason(reason)
	var h Hold
	// Only an admin learns whether a hold ID exists.
	if bad == nil && p.Role == access.RoleAdmin {
		var err error
		if h, err = m.hold(ctx, holdID); errors.Is(err, ErrNotFound) {
			bad = invalid("no hold with this ID")
		} else if err != nil {
			return ReleaseResult{}, err
		}
	}
	a := attempt{action: ActionHoldRelease, tenant: h.Scope.Tenant, traceID: h.Scope.TraceID, reason: reason, detail: h.ID}
	if err := m.authorize(ctx, p, a, bad); err != nil {
		return ReleaseResult{}, err
	}
	res, err := m.release(ctx, h, p.User, strings.TrimSpace(reason))
	if err != nil {
		m.recordFailure(ctx, p, a)
		return res, err
	}
	m.logger.Info("legal hold released", "hold_id", h.ID, "actor", p.User, "objects_released", res.ObjectsReleased, "objects_still_held", res.ObjectsStillHeld)
	res.Resumed, err = m.ResumeDeletions(ctx, p, h.Scope.Tenant)
	if err != nil {
		return res, fmt.Errorf("lifecycle: hold %s released; resuming blocked deletion jobs: %w", h.ID, err)
	}
	return res, nil
}

func (m *Manager) release(ctx context.Context, h Hold, actor, reason string) (ReleaseResult, error) {
	m.holdMu.Lock()
	defer m.holdMu.Unlock()
	// Read again under the lock: a concurrent release may have won.
	h, err := m.hold(ctx, h.ID)
	if err != nil {
		return ReleaseResult{}, err
	}
	if h.Status == HoldActive {
		now := m.stamp()
		h.Status, h.ReleasedBy, h.ReleasedAt, h.ReleaseReason = HoldReleased, actor, &now, reason
		if err = insert(ctx, m, "lifecycle_insert_hold", h.row(now)); err != nil {
			return ReleaseResult{}, err
		}
	}
	res := ReleaseResult{Hold: h}
	err = m.releaseObjects(ctx, h, actor, &res)
	return res, err
}

// applyHold holds the objects of the calls in the hold's scope that it has
// not been applied to yet. holdMu must be held.
func (m *Manager) applyHold(ctx context.Context, h Hold, actor string) (HoldApplied, error) {
	var n HoldApplied
	params := map[string]any{"tenant": h.Scope.Tenant, "hold_id": h.ID}
	err := m.eachRefPage(ctx, "lifecycle_hold_refs_pending", params, func(page []string) error {
		byDetail := map[string][]contentstore.Ref{}
		var failed error
		for _, ref := range tenantRefs(h.Scope.Tenant, page) {
			err := m.content.SetLegalHold(ctx, ref, true)
			switch {
			case err == nil:
				n.ObjectsHeld++
				byDetail[""] = append(byDetail[""], ref)
			case errors.Is(err, contentstore.ErrLegalHoldUnsupported):
				n.ObjectsNotEnforced++
				byDetail[DetailNotEnforced] = append(byDetail[DetailNotEnforced], ref)
			case errors.Is(err, contentstore.ErrNotFound):
				n.ObjectsMissing++
			default:
				failed = err
			}
			if failed != nil {
				break
			}
		}
		// What was done is recorded even when a later object failed.
		return errors.Join(m.recordByDetail(ctx, byDetail, ContentEvent{Event: EventHeld, Actor: actor, HoldID: h.ID}), failed)
	})
	return n, err
}

// releaseObjects lifts a released hold from the objects it was applied to,
// except where another active hold covers them. holdMu must be held.
func (m *Manager) releaseObjects(ctx context.Context, h Hold, actor string, res *ReleaseResult) error {
	params := map[string]any{"tenant": h.Scope.Tenant, "hold_id": h.ID}
	return m.eachRefPage(ctx, "lifecycle_hold_refs_unreleased", params, func(page []string) error {
		status, err := m.refStatuses(ctx, h.Scope.Tenant, m.clock(), page)
		if err != nil {
			return err
		}
		byDetail := map[string][]contentstore.Ref{}
		var failed error
		for _, ref := range tenantRefs(h.Scope.Tenant, page) {
			if status[ref.String()].held {
				res.ObjectsStillHeld++
				byDetail[DetailStillHeld] = append(byDetail[DetailStillHeld], ref)
				continue
			}
			err := m.content.SetLegalHold(ctx, ref, false)
			switch {
			case err == nil:
				byDetail[""] = append(byDetail[""], ref)
			case errors.Is(err, contentstore.ErrNotFound):
				byDetail[DetailObjectGone] = append(byDetail[DetailObjectGone], ref)
			case errors.Is(err, contentstore.ErrLegalHoldUnsupported):
				byDetail[DetailNotEnforced] = append(byDetail[DetailNotEnforced], ref)
			default:
				failed = err
			}
			if failed != nil {
				break
			}
			res.ObjectsReleased++
		}
		return errors.Join(m.recordByDetail(ctx, byDetail, ContentEvent{Event: EventReleased, Actor: actor, HoldID: h.ID}), failed)
	})
}

// recordByDetail records one event per object, with the detail it is
// filed under.
func (m *Manager) recordByDetail(ctx context.Context, byDetail map[string][]contentstore.Ref, tmpl ContentEvent) error {
	for detail, refs := range byDetail {
		tmpl.Detail = detail
		if err := m.recordEvents(ctx, refs, tmpl); err != nil {
			return err
		}
	}
	return nil
}

// syncHolds brings the store in line with the holds of a tenant ("" for
// all): active holds are applied to objects of calls that arrived since,
// and releases an interruption left half done are completed.
func (m *Manager) syncHolds(ctx context.Context, tenant string) error {
	holds, err := query[holdRow](ctx, m, "lifecycle_holds", map[string]any{"tenant": tenant, "hold_id": "", "status": "", "limit": uint64(1 << 62)})
	if err != nil {
		return err
	}
	m.holdMu.Lock()
	defer m.holdMu.Unlock()
	for _, r := range holds {
		h := r.hold()
		if h.Status == HoldActive {
			_, err = m.applyHold(ctx, h, SystemPrincipal.User)
		} else {
			err = m.releaseObjects(ctx, h, SystemPrincipal.User, &ReleaseResult{})
		}
		if err != nil {
			return fmt.Errorf("lifecycle: sync hold %s: %w", h.ID, err)
		}
	}
	return nil
}

func (m *Manager) hold(ctx context.Context, id string) (Hold, error) {
	if id == "" {
		return Hold{}, ErrNotFound
	}
	rows, err := query[holdRow](ctx, m, "lifecycle_holds", map[string]any{"tenant": "", "hold_id": id, "status": "", "limit": 1})
	if err != nil {
		return Hold{}, err
	}
	if len(rows) == 0 {
		return Hold{}, ErrNotFound
	}
	return rows[0].hold(), nil
}

// HoldFilter selects holds; empty fields select all.
type HoldFilter struct {
	Tenant string
	// Status is HoldActive, HoldReleased or "".
	Status string
	// Limit caps the result (default 1000).
	Limit uint64
}

// Holds lists holds in their current state, newest first, of the tenants p
// may see.
func (m *Manager) Holds(ctx context.Context, p access.Principal, f HoldFilter) ([]Hold, error) {
	if f.Limit == 0 {
		f.Limit = 1000
	}
	var out []Hold
	err := eachReadableTenant(p, f.Tenant, func(tenant string) error {
		rows, err := query[holdRow](ctx, m, "lifecycle_holds", map[string]any{"tenant": tenant, "hold_id": "", "status": f.Status, "limit": f.Limit})
		for _, r := range rows {
			out = append(out, r.hold())
		}
		return err
	})
	return out, err
}

// Hold returns one hold in its current state.
func (m *Manager) Hold(ctx context.Context, p access.Principal, id string) (Hold, error) {
	h, err := m.hold(ctx, id)
	if err != nil {
		return Hold{}, err
	}
	if err := mayRead(p, h.Scope.Tenant); err != nil {
		return Hold{}, err
	}
	return h, nil
}

// eachReadableTenant calls fn once with tenant if given, once with "" (all
// tenants) for a principal granted all, or once per granted tenant.
func eachReadableTenant(p access.Principal, tenant string, fn func(string) error) error {
	if tenant != "" || p.MayAccessTenant(access.AllTenants) {
		if err := mayRead(p, tenant); err != nil {
			return err
		}
		return fn(tenant)
	}
	for _, t := range p.Tenants {
		if err := mayRead(p, t); err != nil {
			return err
		}
		if err := fn(t); err != nil {
			return err
		}
	}
	return nil
}
