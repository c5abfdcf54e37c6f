package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// A batch of deletions checks the holds once and then deletes object after
// object. A hold recorded in between is not seen by that batch, and a store
// without legal holds (an S3 bucket without Object Lock) does not refuse
// the deletes, so the hold could be acknowledged while objects it covers
// are still being deleted. The fence closes that window across processes
// sharing a ledger: a batch records that it began (queries
// lifecycle_insert_disposal) before it reads the holds, and deletes for at
// most disposalBound; a new hold, once recorded, waits for the batches of
// its tenant that began earlier. A batch that began after the hold was
// recorded reads it.

// disposalBound is how long a batch may delete after it began. It is far
// above a page of deletes (a thousand store calls), so a batch that hits it
// is stuck and is retried later.
const disposalBound = 2 * time.Minute

// disposalMargin absorbs the difference between the clock rates of the
// process deleting and the process waiting over one bound.
const disposalMargin = disposalBound / 10

// States of a batch's rows in the ledger table disposals.
const (
	DisposalBegun = "begun"
	DisposalEnded = "ended"
)

// errDisposalOverran: a batch reached disposalBound; a waiting hold no
// longer waits for it, so it must not delete any more.
var errDisposalOverran = errors.New("lifecycle: a batch of deletions ran out of time; it is retried")

// fence is one batch's record.
type fence struct {
	id, tenant string
	deadline   time.Time
}

// beginDisposal records that a batch of deletions of a tenant begins. The
// batch may delete until the returned fence's deadline.
func (m *Manager) beginDisposal(ctx context.Context, tenant string) (fence, error) {
	f := fence{id: newID("disp_"), tenant: tenant, deadline: time.Now().Add(disposalBound - disposalMargin)}
	return f, m.recordDisposal(ctx, f, DisposalBegun)
}

// recordDisposal records a state of the batch.
func (m *Manager) recordDisposal(ctx context.Context, f fence, state string) error {
	return m.exec(ctx, "lifecycle_insert_disposal", map[string]any{"tenant": f.tenant, "disposal_id": f.id, "state": state})
}

// mayDelete reports whether the batch may still delete.
func (f fence) mayDelete() error {
	if !time.Now().Before(f.deadline) {
		return errDisposalOverran
	}
	return nil
}

// endDisposal records that the batch deletes no more, even when its run was
// cancelled. Should it fail, a waiting hold waits until the bound.
func (m *Manager) endDisposal(ctx context.Context, f fence) {
	if err := m.recordDisposal(context.WithoutCancel(ctx), f, DisposalEnded); err != nil {
		m.logger.Warn("could not record the end of a batch of deletions; new holds of its tenant wait for its bound", "disposal_id", f.id, "err", err)
	}
}

// awaitDisposals waits until the batches of deletions of a tenant that
// began before it was called have ended, or can no longer delete. Call it
// after recording a hold: batches that begin later read the hold, so they
// are not waited for (a long job's next batches would keep a hold waiting).
func (m *Manager) awaitDisposals(ctx context.Context, tenant string) error {
	// Batches that began before now stop deleting by now plus the bound.
	until := time.Now().Add(disposalBound)
	waiting, err := m.openDisposals(ctx, tenant)
	if err != nil {
		return err
	}
	return m.waitForDisposals(ctx, tenant, waiting, until)
}

// waitForDisposals waits until none of the batches in waiting is open any
// more, or until.
func (m *Manager) waitForDisposals(ctx context.Context, tenant string, waiting map[string]bool, until time.Time) error {
	for poll := 20 * time.Millisecond; len(waiting) > 0; poll = min(2*poll, time.Second) {
		if !time.Now().Before(until) {
			m.logger.Warn("batches of deletions recorded no end; they can no longer delete", "batches", len(waiting))
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("lifecycle: waiting for %d batches of deletions to end: %w", len(waiting), ctx.Err())
		case <-time.After(min(poll, time.Until(until))):
		}
		open, err := m.openDisposals(ctx, tenant)
		if err != nil {
			return err
		}
		for id := range waiting {
			if !open[id] {
				delete(waiting, id)
			}
		}
	}
	return nil
}

// openDisposals returns the IDs of a tenant's batches of deletions that
// may still be deleting.
func (m *Manager) openDisposals(ctx context.Context, tenant string) (map[string]bool, error) {
	rows, err := query[struct {
		ID string `json:"disposal_id"`
	}](ctx, m, "lifecycle_open_disposals", map[string]any{"tenant": tenant, "ended": DisposalEnded,
		"within_ms": uint64((disposalBound + disposalMargin) / time.Millisecond)})
	out := make(map[string]bool, len(rows))
	for _, r := range rows {
		out[r.ID] = true
	}
	return out, err
}
