package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger/access"
)

// Expiry run states.
const (
	RunRunning = "running"
	RunDone    = "done"
	RunFailed  = "failed"
	// RunInterrupted is read, never recorded: a run still running whose
	// last heartbeat is more than three heartbeats old. The process
	// running it stopped (a crash, a kill) before recording an outcome.
	RunInterrupted = "interrupted"
)

// expiryHeartbeat is how often a running expiry run records that it is
// alive, with its counts so far.
const expiryHeartbeat = 30 * time.Second

// Phases of an expiry run, as reported to Progress.
const (
	PhaseHolds   = "holds"
	PhaseContent = "content"
	PhaseLedger  = "ledger"
	PhaseDone    = "done"
)

// ExpireOptions control one expiry run.
type ExpireOptions struct {
	// Now is the instant retention is measured from; zero means the clock.
	Now time.Time
	// DryRun counts what would expire and changes nothing (the run itself
	// is still recorded).
	DryRun bool
	// Tenant restricts the run to one tenant; "" runs every tenant and
	// needs a grant of all tenants.
	Tenant string
	// Reason is recorded with the run; default "retention policy".
	Reason string
	// Progress, if set, is called as the run advances.
	Progress func(Progress)
}

// ExpiryCounts describe an expiry run. In a dry run they say what would
// happen.
type ExpiryCounts struct {
	// ObjectsScanned: objects the store listed.
	ObjectsScanned uint64 `json:"objects_scanned"`
	// ObjectsExpired: objects stored before their tenant's content
	// retention and referenced by no live call, deleted.
	ObjectsExpired uint64 `json:"objects_expired"`
	// ObjectsKeptLive: such old objects still referenced by a call within
	// retention (a long-lived shared prompt).
	ObjectsKeptLive uint64 `json:"objects_kept_live"`
	// ObjectsHeld: old objects a legal hold keeps.
	ObjectsHeld          uint64 `json:"objects_held"`
	CallsExpired         uint64 `json:"calls_expired"`
	CallsHeld            uint64 `json:"calls_held"`
	EvidenceSpansExpired uint64 `json:"evidence_spans_expired"`
	EvidenceSpansHeld    uint64 `json:"evidence_spans_held"`
	// LogRefsExpired and LogRefsHeld count the links of log records'
	// content references to their spans (ledger rows too).
	LogRefsExpired uint64 `json:"log_refs_expired"`
	LogRefsHeld    uint64 `json:"log_refs_held"`
}

// ExpiryRun is one run of retention expiry.
type ExpiryRun struct {
	ID string `json:"run_id"`
	// AsOf is the instant retention was measured from.
	AsOf   time.Time `json:"as_of"`
	DryRun bool      `json:"dry_run"`
	// Tenants the run covered; empty means all.
	Tenants   []string  `json:"tenants"`
	RunBy     string    `json:"run_by"`
	Reason    string    `json:"reason"`
	StartedAt time.Time `json:"started_at"`
	Status    string    `json:"status"`
	ExpiryCounts
	Error string `json:"error"`
	// At is when this state was recorded.
	At time.Time `json:"at"`
}

// Progress reports an expiry run as it advances.
type Progress struct {
	RunID  string       `json:"run_id"`
	DryRun bool         `json:"dry_run"`
	Phase  string       `json:"phase"`
	Tenant string       `json:"tenant,omitempty"`
	Counts ExpiryCounts `json:"counts"`
}

// Expire applies retention: content objects stored before their tenant's
// content retention that no live call references are deleted, unless a
// legal hold covers a call referencing them; ledger rows (calls and
// evidence spans) that started before the ledger retention are removed,
// unless held. Each run is recorded with its counts; removed objects get an
// "expired" content event.
func (m *Manager) Expire(ctx context.Context, p access.Principal, opts ExpireOptions) (ExpiryRun, error) {
	if opts.Reason == "" {
		opts.Reason = "retention policy"
	}
	bad := checkReason(opts.Reason)
	if bad == nil && opts.Tenant != "" {
		bad = invalidTenant(opts.Tenant)
	}
	if opts.Now.IsZero() {
		opts.Now = m.clock()
	}
	run := ExpiryRun{ID: newID("exp_"), AsOf: opts.Now.UTC(), DryRun: opts.DryRun, Tenants: []string{}, RunBy: p.User,
		Reason: strings.TrimSpace(opts.Reason), Status: RunRunning}
	if opts.Tenant != "" {
		run.Tenants = []string{opts.Tenant}
	}
	a := attempt{action: ActionExpire, tenant: opts.Tenant, reason: opts.Reason, detail: run.ID}
	if err := m.authorize(ctx, p, a, bad); err != nil {
		return ExpiryRun{}, err
	}
	m.expireMu.Lock()
	defer m.expireMu.Unlock()
	run.StartedAt = m.stamp()
	run.At = run.StartedAt
	if err := insert(ctx, m, "lifecycle_insert_expiry_run", run); err != nil {
		m.recordFailure(ctx, p, a)
		return run, err
	}
	// Heartbeats record the run as of the last phase reported: expire
	// changes run's counts while they are built.
	var latestMu sync.Mutex
	latest := run
	report := func(phase, tenant string) {
		latestMu.Lock()
		latest = run
		latestMu.Unlock()
		if opts.Progress != nil {
			opts.Progress(Progress{RunID: run.ID, DryRun: run.DryRun, Phase: phase, Tenant: tenant, Counts: run.ExpiryCounts})
		}
	}
	stopHeartbeat := m.heartbeat(ctx, func() ExpiryRun {
		latestMu.Lock()
		defer latestMu.Unlock()
		beat := latest
		beat.At = m.stamp()
		return beat
	})
	err := m.expire(ctx, &run, opts.Tenant, report)
	// No heartbeat may land after the outcome: the latest record wins.
	stopHeartbeat()
	run.Status, run.At = RunDone, m.stamp()
	if err != nil {
		run.Status, run.Error = RunFailed, errText(err)
	}
	// The outcome is recorded even when the run was cancelled.
	if rerr := insert(context.WithoutCancel(ctx), m, "lifecycle_insert_expiry_run", run); rerr != nil {
		err = errors.Join(err, rerr)
	}
	report(PhaseDone, "")
	if err != nil {
		m.recordFailure(ctx, p, a)
		m.logger.Error("expiry run failed", "run_id", run.ID, "err", err)
		return run, fmt.Errorf("lifecycle: expiry run %s: %w", run.ID, err)
	}
	m.logger.Info("expiry run done", "run_id", run.ID, "dry_run", run.DryRun, "objects_expired", run.ObjectsExpired,
		"objects_held", run.ObjectsHeld, "calls_expired", run.CallsExpired, "calls_held", run.CallsHeld)
	return run, nil
}

// heartbeat records beat() every m.heartbeatEvery until the returned stop
// is called; stop returns once no record is being written.
func (m *Manager) heartbeat(ctx context.Context, beat func() ExpiryRun) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(m.heartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				run := beat()
				if err := insert(ctx, m, "lifecycle_insert_expiry_run", run); err != nil {
					m.logger.Warn("expiry run heartbeat not recorded", "run_id", run.ID, "err", err)
				}
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}

func invalidTenant(t string) error {
	if err := contentstore.ValidateTenant(t); err != nil {
		return invalid("tenant: %v", err)
	}
	return nil
}

func (m *Manager) expire(ctx context.Context, run *ExpiryRun, tenant string, report func(phase, tenant string)) error {
	if !run.DryRun {
		report(PhaseHolds, tenant)
		// Holds on calls that arrived since they were created reach the
		// store before anything is deleted.
		if err := m.syncHolds(ctx, tenant); err != nil {
			return err
		}
	}
	if err := m.expireContent(ctx, run, tenant, report); err != nil {
		return err
	}
	return m.expireLedger(ctx, run, tenant, report)
}

// expireContent lists the store and disposes of objects older than their
// tenant's content retention, a page at a time.
func (m *Manager) expireContent(ctx context.Context, run *ExpiryRun, tenant string, report func(phase, tenant string)) error {
	report(PhaseContent, tenant)
	pending := map[string][]contentstore.Ref{}
	flush := func(t string) error {
		cutoff := m.policy.For(t).ContentCutoff(run.AsOf)
		d, err := m.dispose(ctx, t, cutoff, pending[t], run.DryRun)
		delete(pending, t)
		run.ObjectsExpired += d.deleted
		run.ObjectsKeptLive += d.live
		run.ObjectsHeld += d.held
		err = errors.Join(m.recordEvents(ctx, d.removed, ContentEvent{Event: EventExpired, Actor: run.RunBy, JobID: run.ID}), err)
		report(PhaseContent, t)
		return err
	}
	err := m.content.List(ctx, contentstore.Selection{Tenant: tenant}, func(info contentstore.ObjectInfo) error {
		run.ObjectsScanned++
		t := info.Ref.Tenant
		if !info.StoredAt.Before(m.policy.For(t).ContentCutoff(run.AsOf)) {
			return nil
		}
		pending[t] = append(pending[t], info.Ref)
		if len(pending[t]) >= pageSize {
			return flush(t)
		}
		return nil
	})
	if err != nil {
		return err
	}
	tenants := make([]string, 0, len(pending))
	for t := range pending {
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)
	for _, t := range tenants {
		if err := flush(t); err != nil {
			return err
		}
	}
	return nil
}

type expirable struct {
	Expired uint64 `json:"expired"`
	Held    uint64 `json:"held"`
}

// expireLedger removes ledger rows older than each tenant's ledger
// retention that no hold covers.
func (m *Manager) expireLedger(ctx context.Context, run *ExpiryRun, tenant string, report func(phase, tenant string)) error {
	tenants := []string{tenant}
	if tenant == "" {
		rows, err := query[struct {
			Tenant string `json:"tenant"`
		}](ctx, m, "lifecycle_tenants", nil)
		if err != nil {
			return err
		}
		tenants = tenants[:0]
		for _, r := range rows {
			tenants = append(tenants, r.Tenant)
		}
	}
	for _, t := range tenants {
		cutoff := m.policy.For(t).LedgerCutoff(run.AsOf)
		params := map[string]any{"tenant": t, "cutoff": cutoff}
		removed := false
		for _, table := range []struct {
			count, keys, remove string
			expired, held       *uint64
		}{
			{"lifecycle_expirable_calls", "lifecycle_expiring_call_keys", "lifecycle_expire_calls", &run.CallsExpired, &run.CallsHeld},
			{"lifecycle_expirable_evidence", "lifecycle_expiring_evidence_keys", "lifecycle_expire_evidence", &run.EvidenceSpansExpired, &run.EvidenceSpansHeld},
			{"lifecycle_expirable_log_refs", "", "lifecycle_expire_log_refs", &run.LogRefsExpired, &run.LogRefsHeld},
		} {
			rows, err := query[expirable](ctx, m, table.count, params)
			if err != nil {
				return err
			}
			if len(rows) != 1 {
				return fmt.Errorf("lifecycle: %s returned %d rows", table.count, len(rows))
			}
			*table.expired += rows[0].Expired
			*table.held += rows[0].Held
			if rows[0].Expired > 0 && !run.DryRun {
				if err := m.expireRows(ctx, table.keys, table.remove, params); err != nil {
					return err
				}
				removed = true
			}
		}
		if removed {
			if err := m.ledger.RefreshCallsBefore(ctx, t, cutoff); err != nil {
				return fmt.Errorf("lifecycle: expiry of %s: %w", t, err)
			}
		}
		report(PhaseLedger, t)
	}
	return nil
}

// ExpiryRuns lists expiry runs in their current state, newest first. A
// principal granted all tenants sees every run; others see the runs limited
// to one of their tenants.
func (m *Manager) ExpiryRuns(ctx context.Context, p access.Principal, limit uint64) ([]ExpiryRun, error) {
	if p.User == "" {
		return nil, fmt.Errorf("%w: the reader is unknown", access.ErrDenied)
	}
	if limit == 0 {
		limit = 1000
	}
	runs, err := query[ExpiryRun](ctx, m, "lifecycle_expiry_runs", map[string]any{"run_id": "", "limit": limit})
	if err != nil {
		return nil, err
	}
	out := runs[:0]
	now := m.clock()
	for _, r := range runs {
		if len(r.Tenants) == 0 && p.MayAccessTenant(access.AllTenants) || len(r.Tenants) == 1 && p.MayAccessTenant(r.Tenants[0]) {
			if r.Status == RunRunning && now.Sub(r.At) > 3*m.heartbeatEvery {
				r.Status = RunInterrupted
				r.Error = "no heartbeat since " + r.At.UTC().Format(time.RFC3339) + ": the process running it stopped before it finished"
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// expireKeysBytes bounds the key list of one DELETE, which is a literal in
// the statement's text; a trace's keys are not split, whatever their size.
const expireKeysBytes = 256 << 10

// expireRows runs the DELETE remove. With a keys query it first reads the
// keys to remove, then deletes them as a constant list: the engine
// evaluates a DELETE's subquery again for each part it rewrites, so a
// subquery judging keys as FINAL shows them let a conflicting later
// version, in another partition, surface once an earlier part had lost the
// recorded row.
func (m *Manager) expireRows(ctx context.Context, keys, remove string, params map[string]any) error {
	if keys == "" {
		return m.exec(ctx, remove, params)
	}
	rows, err := m.expiringKeys(ctx, keys, params)
	if err != nil {
		return err
	}
	return m.removeKeys(ctx, remove, params["tenant"].(string), rows)
}

// rowKey is a ledger row's key, [trace_id, span_id].
type rowKey [2]string

// expiringKeys reads the keys the query keys finds past retention and not
// held. A hold created after this read is seen by removeKeys' statement.
func (m *Manager) expiringKeys(ctx context.Context, keys string, params map[string]any) ([]rowKey, error) {
	rows, err := query[struct {
		TraceID string `json:"trace_id"`
		SpanID  string `json:"span_id"`
	}](ctx, m, keys, params)
	if err != nil {
		return nil, err
	}
	out := make([]rowKey, len(rows))
	for i, r := range rows {
		out[i] = rowKey{r.TraceID, r.SpanID}
	}
	return out, nil
}

// removeKeys runs the DELETE remove over keys of tenant, a trace's keys
// in one statement and at most about expireKeysBytes of keys in each. Each
// statement gets the end users its traces' calls name, read just before
// it: the holds naming an end user it reads itself are matched against
// them, so that a hold placed since the keys were read keeps its traces.
func (m *Manager) removeKeys(ctx context.Context, remove, tenant string, keys []rowKey) error {
	slices.SortFunc(keys, func(a, b rowKey) int { return strings.Compare(a[0], b[0]) })
	for len(keys) > 0 {
		n, size := 0, 0
		var traces []string
		for ; n < len(keys); n++ {
			k, grow := keys[n], len(keys[n][0])+len(keys[n][1])+8
			if n == 0 || k[0] != keys[n-1][0] {
				if n > 0 && size+grow > expireKeysBytes {
					break
				}
				traces = append(traces, k[0])
			}
			size += grow
		}
		users, err := m.traceEndUsers(ctx, tenant, traces)
		if err != nil {
			return err
		}
		list, err := json.Marshal(keys[:n])
		if err != nil {
			return err
		}
		if err := m.exec(ctx, remove, map[string]any{"tenant": tenant, "keys": string(list), "users": users}); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// traceEndUsers is the JSON list of [trace_id, end_user_ref, start in Unix
// nanoseconds] of the call rows of traces that name an end user.
func (m *Manager) traceEndUsers(ctx context.Context, tenant string, traces []string) (string, error) {
	list, err := json.Marshal(traces)
	if err != nil {
		return "", err
	}
	rows, err := query[struct {
		TraceID string      `json:"trace_id"`
		EndUser string      `json:"end_user_ref"`
		StartNS json.Number `json:"start_ns"`
	}](ctx, m, "lifecycle_trace_end_users", map[string]any{"tenant": tenant, "traces": string(list)})
	if err != nil {
		return "", err
	}
	users := make([][3]any, len(rows))
	for i, r := range rows {
		users[i] = [3]any{r.TraceID, r.EndUser, r.StartNS}
	}
	b, err := json.Marshal(users)
	return string(b), err
}
