package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docketlabs/docket/ledger/access"
)

// Deletion job states.
const (
	JobPending = "pending"
	JobRunning = "running"
	// JobBlocked: some objects are on legal hold; the job runs again when
	// a hold of its tenant is released.
	JobBlocked = "blocked_by_hold"
	JobDone    = "done"
	// JobFailed: the last run stopped on an error (store or ledger
	// unavailable); the background runner retries it.
	JobFailed = "failed"
)

// DeletionRequest asks to delete the content of the calls in a scope.
// Ledger rows stay, with their hashes, metadata and this request on record.
// The request covers calls that started before it was made.
type DeletionRequest struct {
	Scope  Scope
	Reason string
}

// DeletionCounts describe a deletion job after its latest run.
type DeletionCounts struct {
	// CallsMatched: ledger calls the request covers.
	CallsMatched uint64 `json:"calls_matched"`
	// ObjectsMatched: distinct content objects those calls reference.
	ObjectsMatched uint64 `json:"objects_matched"`
	// ObjectsDeleted: objects gone from the store (deleted by any run of
	// the job, or already gone).
	ObjectsDeleted uint64 `json:"objects_deleted"`
	// ObjectsKeptShared: objects live calls outside the request still
	// reference (a shared system prompt); they stay.
	ObjectsKeptShared uint64 `json:"objects_kept_shared"`
	// ObjectsHeld: objects a legal hold keeps; the job waits for release.
	ObjectsHeld uint64 `json:"objects_held"`
}

// DeletionJob is a deletion request and the state of its processing.
type DeletionJob struct {
	ID          string         `json:"job_id"`
	Scope       Scope          `json:"scope"`
	Reason      string         `json:"reason"`
	RequestedBy string         `json:"requested_by"`
	RequestedAt time.Time      `json:"requested_at"`
	Status      string         `json:"status"`
	RunBy       string         `json:"run_by,omitempty"`
	Counts      DeletionCounts `json:"counts"`
	Error       string         `json:"error,omitempty"`
	// UpdatedAt is when this state was recorded.
	UpdatedAt time.Time `json:"updated_at"`
}

type jobRow struct {
	JobID string `json:"job_id"`
	scopeCols
	Reason      string    `json:"reason"`
	RequestedBy string    `json:"requested_by"`
	RequestedAt time.Time `json:"requested_at"`
	Status      string    `json:"status"`
	RunBy       string    `json:"run_by"`
	DeletionCounts
	Error string    `json:"error"`
	At    time.Time `json:"at"`
}

func (j DeletionJob) row() jobRow {
	return jobRow{JobID: j.ID, scopeCols: j.Scope.cols(), Reason: j.Reason, RequestedBy: j.RequestedBy, RequestedAt: j.RequestedAt,
		Status: j.Status, RunBy: j.RunBy, DeletionCounts: j.Counts, Error: j.Error, At: j.UpdatedAt}
}

func (r jobRow) job() DeletionJob {
	return DeletionJob{ID: r.JobID, Scope: r.scope(), Reason: r.Reason, RequestedBy: r.RequestedBy, RequestedAt: r.RequestedAt.UTC(),
		Status: r.Status, RunBy: r.RunBy, Counts: r.DeletionCounts, Error: r.Error, UpdatedAt: r.At.UTC()}
}

// RequestDeletion records a deletion request and runs it. Objects on legal
// hold stay and leave the job blocked_by_hold; releasing the hold runs it
// again. The returned job carries the counts of the run; if the run failed,
// the job is returned with the error and is retried later.
func (m *Manager) RequestDeletion(ctx context.Context, p access.Principal, req DeletionRequest) (DeletionJob, error) {
	job, run, err := m.SubmitDeletion(ctx, p, req)
	if err != nil {
		return job, err
	}
	return run(ctx)
}

// SubmitDeletion records a deletion request as a pending job and returns
// it with the function that runs it, for callers that answer before the
// run ends (the UI). A pending job that is never run is resumed by the
// background runner.
func (m *Manager) SubmitDeletion(ctx context.Context, p access.Principal, req DeletionRequest) (DeletionJob, func(context.Context) (DeletionJob, error), error) {
	scope, bad := req.Scope.normalize()
	if bad == nil {
		bad = checkReason(req.Reason)
	}
	id := newID("del_")
	a := attempt{action: ActionDeleteRequest, tenant: req.Scope.Tenant, traceID: req.Scope.TraceID, reason: req.Reason, detail: id}
	if err := m.authorize(ctx, p, a, bad); err != nil {
		return DeletionJob{}, nil, err
	}
	now := m.stamp()
	job := DeletionJob{ID: id, Scope: scope, Reason: strings.TrimSpace(req.Reason), RequestedBy: p.User, RequestedAt: now, Status: JobPending, UpdatedAt: now}
	if err := insert(ctx, m, "lifecycle_insert_deletion_job", job.row()); err != nil {
		m.recordFailure(ctx, p, a)
		return DeletionJob{}, nil, err
	}
	m.logger.Info("deletion requested", "job_id", id, "actor", p.User)
	return job, func(ctx context.Context) (DeletionJob, error) { return m.run(ctx, p, job, a) }, nil
}

// RunDeletion runs a deletion job again. Running a job is idempotent:
// objects already gone count as deleted, and nothing is recorded twice.
func (m *Manager) RunDeletion(ctx context.Context, p access.Principal, jobID string) (DeletionJob, error) {
	var job DeletionJob
	var bad error
	if p.Role == access.RoleAdmin {
		var err error
		if job, err = m.job(ctx, jobID); errors.Is(err, ErrNotFound) {
			bad = invalid("no deletion job with this ID")
		} else if err != nil {
			return DeletionJob{}, err
		}
	}
	a := attempt{action: ActionDeleteRun, tenant: job.Scope.Tenant, traceID: job.Scope.TraceID, reason: job.Reason, detail: job.ID}
	if err := m.authorize(ctx, p, a, bad); err != nil {
		return DeletionJob{}, err
	}
	return m.run(ctx, p, job, a)
}

// ResumeDeletions runs the unfinished deletion jobs of a tenant ("" for
// every tenant p may manage): pending, interrupted and failed ones, and
// those blocked by a hold if a hold of their tenant was released since
// their last run.
func (m *Manager) ResumeDeletions(ctx context.Context, p access.Principal, tenant string) ([]DeletionJob, error) {
	if err := mayRead(p, tenant); err != nil {
		return nil, err
	}
	jobs, err := query[jobRow](ctx, m, "lifecycle_deletion_jobs", map[string]any{"tenant": tenant, "job_id": "", "status": "", "limit": uint64(1 << 62)})
	if err != nil {
		return nil, err
	}
	releasedAt := map[string]time.Time{}
	holds, err := query[holdRow](ctx, m, "lifecycle_holds", map[string]any{"tenant": tenant, "hold_id": "", "status": HoldReleased, "limit": uint64(1 << 62)})
	if err != nil {
		return nil, err
	}
	for _, h := range holds {
		if h.ReleasedAt != nil && h.ReleasedAt.After(releasedAt[h.Tenant]) {
			releasedAt[h.Tenant] = *h.ReleasedAt
		}
	}
	var out []DeletionJob
	var errs []error
	for _, r := range jobs {
		if ctx.Err() != nil {
			// Stopped, or the runner lost its lease: another replica
			// resumes the rest; none is started here any more.
			return out, errors.Join(append(errs, ctx.Err())...)
		}
		job := r.job()
		if job.Status == JobDone || job.Status == JobBlocked && !releasedAt[job.Scope.Tenant].After(job.UpdatedAt) || !p.MayAccessTenant(job.Scope.Tenant) {
			continue
		}
		a := attempt{action: ActionDeleteRun, tenant: job.Scope.Tenant, traceID: job.Scope.TraceID, reason: job.Reason, detail: job.ID}
		if err := m.authorize(ctx, p, a, nil); err != nil {
			return out, err
		}
		job, err := m.run(ctx, p, job, a)
		out = append(out, job)
		if err != nil {
			errs = append(errs, fmt.Errorf("job %s: %w", job.ID, err))
		}
	}
	return out, errors.Join(errs...)
}

// run processes a job: it brings the store's holds up to date, then
// deletes every object of the covered calls that no live call references
// and no hold covers, and records the outcome.
func (m *Manager) run(ctx context.Context, p access.Principal, job DeletionJob, a attempt) (DeletionJob, error) {
	m.jobMu.Lock()
	defer m.jobMu.Unlock()
	job.Status, job.RunBy, job.Error, job.UpdatedAt = JobRunning, p.User, "", m.stamp()
	if err := insert(ctx, m, "lifecycle_insert_deletion_job", job.row()); err != nil {
		m.recordFailure(ctx, p, a)
		return job, err
	}
	counts, err := m.deleteJobObjects(ctx, job, p.User)
	job.Counts, job.UpdatedAt = counts, m.stamp()
	switch {
	case err != nil:
		job.Status, job.Error = JobFailed, errText(err)
	case counts.ObjectsHeld > 0:
		job.Status = JobBlocked
	default:
		job.Status = JobDone
	}
	// The outcome is recorded even when the run was cancelled.
	if rerr := insert(context.WithoutCancel(ctx), m, "lifecycle_insert_deletion_job", job.row()); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		m.recordFailure(ctx, p, a)
		m.logger.Error("deletion job failed", "job_id", job.ID, "err", err)
		return job, fmt.Errorf("lifecycle: deletion job %s: %w", job.ID, err)
	}
	m.logger.Info("deletion job ran", "job_id", job.ID, "status", job.Status, "calls", counts.CallsMatched,
		"objects", counts.ObjectsMatched, "deleted", counts.ObjectsDeleted, "kept_shared", counts.ObjectsKeptShared, "held", counts.ObjectsHeld)
	return job, nil
}

func (m *Manager) deleteJobObjects(ctx context.Context, job DeletionJob, actor string) (DeletionCounts, error) {
	var c DeletionCounts
	tenant := job.Scope.Tenant
	if err := m.syncHolds(ctx, tenant); err != nil {
		return c, err
	}
	calls, err := query[struct {
		Calls uint64 `json:"calls"`
	}](ctx, m, "lifecycle_job_calls", map[string]any{"tenant": tenant, "job_id": job.ID})
	if err != nil {
		return c, err
	}
	if len(calls) == 1 {
		c.CallsMatched = calls[0].Calls
	}
	cutoff := m.policy.For(tenant).ContentCutoff(m.clock())
	err = m.eachRefPage(ctx, "lifecycle_job_refs", map[string]any{"tenant": tenant, "job_id": job.ID}, func(page []string) error {
		refs := tenantRefs(tenant, page)
		d, disposeErr := m.dispose(ctx, tenant, cutoff, refs, false)
		c.ObjectsMatched += uint64(len(refs))
		c.ObjectsDeleted += d.deleted
		c.ObjectsKeptShared += d.live
		c.ObjectsHeld += d.held
		return errors.Join(m.recordEvents(ctx, d.removed, ContentEvent{Event: EventDeleted, Actor: actor, JobID: job.ID}), disposeErr)
	})
	return c, err
}

func (m *Manager) job(ctx context.Context, id string) (DeletionJob, error) {
	if id == "" {
		return DeletionJob{}, ErrNotFound
	}
	rows, err := query[jobRow](ctx, m, "lifecycle_deletion_jobs", map[string]any{"tenant": "", "job_id": id, "status": "", "limit": 1})
	if err != nil {
		return DeletionJob{}, err
	}
	if len(rows) == 0 {
		return DeletionJob{}, ErrNotFound
	}
	return rows[0].job(), nil
}

// JobFilter selects deletion jobs; empty fields select all.
type JobFilter struct {
	Tenant string
	Status string
	// Limit caps the result (default 1000).
	Limit uint64
}

// DeletionJobs lists deletion jobs in their current state, newest first,
// of the tenants p may see.
func (m *Manager) DeletionJobs(ctx context.Context, p access.Principal, f JobFilter) ([]DeletionJob, error) {
	if f.Limit == 0 {
		f.Limit = 1000
	}
	var out []DeletionJob
	err := eachReadableTenant(p, f.Tenant, func(tenant string) error {
		rows, err := query[jobRow](ctx, m, "lifecycle_deletion_jobs", map[string]any{"tenant": tenant, "job_id": "", "status": f.Status, "limit": f.Limit})
		for _, r := range rows {
			out = append(out, r.job())
		}
		return err
	})
	return out, err
}

// DeletionJob returns one job in its current state and every state it was
// recorded in, oldest first.
func (m *Manager) DeletionJob(ctx context.Context, p access.Principal, id string) (DeletionJob, []DeletionJob, error) {
	job, err := m.job(ctx, id)
	if err != nil {
		return DeletionJob{}, nil, err
	}
	if err = mayRead(p, job.Scope.Tenant); err != nil {
		return DeletionJob{}, nil, err
	}
	rows, err := query[jobRow](ctx, m, "lifecycle_deletion_job_history", map[string]any{"job_id": id})
	history := make([]DeletionJob, len(rows))
	for i, r := range rows {
		history[i] = r.job()
	}
	return job, history, err
}
