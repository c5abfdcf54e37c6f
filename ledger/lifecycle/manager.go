// Package lifecycle models what happens to stored LLM call data over time
// as explicit, recorded states: retention expiry (content and ledger rows,
// per tenant), deletion on request (by tenant, end user or trace) and legal
// holds (by tenant, end user, trace or time range).
//
// Rules:
//   - A legal hold beats expiry and deletion. Holding a call holds every
//     object it references; on a store that supports it (S3 Object Lock,
//     the directory store's hold marker) the store itself refuses to delete
//     held objects. Releasing a hold lets pending deletions proceed.
//   - One object can be referenced by many calls (a shared system prompt).
//     An object is deleted only when no live call references it any more —
//     live meaning within content retention and not covered by a deletion
//     request.
//   - Ledger rows are never removed by a deletion request: they keep their
//     hashes and metadata, and the request is on record. Ledger rows go only
//     by ledger retention, unless held.
//   - Every change is recorded with who, when, scope and reason (tables
//     legal_holds, deletion_jobs, expiry_runs, content_events) and every
//     attempt, allowed or denied, in the ledger's access log.
//
// All state is in append-only rows (ClickHouse has no transactions), and
// every operation can be re-run: deleting what is already gone counts as
// done, applying a hold twice changes nothing.
package lifecycle

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// Provider is implemented by the lifecycle extension: the UI of the same
// collector uses its Manager and shows its Runner's state.
type Provider interface {
	Lifecycle() (*Manager, *Runner)
}

// Options configure a Manager.
type Options struct {
	// Policy is the retention policy; the zero value means DefaultPolicy.
	Policy Policy
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives progress and failures (never content or scopes).
	Logger *slog.Logger
}

// Manager carries out and records lifecycle operations on one ledger and
// one content store. It is safe for concurrent use.
type Manager struct {
	ledger  *ledgerstore.Store
	eng     storage.Engine
	content contentstore.Store
	policy  Policy
	clock   func() time.Time
	logger  *slog.Logger

	// holdMu serializes creating, releasing and applying holds, so that a
	// release never lifts a store hold another hold has just set.
	holdMu sync.Mutex
	// jobMu serializes deletion runs; expireMu expiry runs.
	jobMu    sync.Mutex
	expireMu sync.Mutex

	stampMu sync.Mutex
	last    time.Time

	// heartbeatEvery is expiryHeartbeat; tests shorten it.
	heartbeatEvery time.Duration
}

// New returns a Manager. The ledger must be migrated.
func New(l *ledgerstore.Store, content contentstore.Store, opts Options) (*Manager, error) {
	if l == nil || content == nil {
		return nil, errors.New("lifecycle: a ledger and a content store are required")
	}
	if opts.Policy.Default == (Retention{}) && opts.Policy.Tenants == nil {
		opts.Policy = DefaultPolicy()
	}
	if err := opts.Policy.Validate(); err != nil {
		return nil, fmt.Errorf("lifecycle: %w", err)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Manager{ledger: l, eng: l.Engine(), content: content, policy: opts.Policy, clock: opts.Now, logger: opts.Logger,
		heartbeatEvery: expiryHeartbeat}, nil
}

// stamp returns the time of a new record, strictly after the previous one,
// so that "latest row wins" never sees a tie.
func (m *Manager) stamp() time.Time {
	m.stampMu.Lock()
	defer m.stampMu.Unlock()
	t := m.clock().UTC()
	if !t.After(m.last) {
		t = m.last.Add(time.Nanosecond)
	}
	m.last = t
	return t
}

func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Access-log actions of this package.
const (
	ActionHoldCreate    = "hold_create"
	ActionHoldRelease   = "hold_release"
	ActionDeleteRequest = "delete_request"
	ActionDeleteRun     = "delete_run"
	ActionExpire        = "expire"
)

// DetailRole is the access-log detail of a principal whose role may not
// change lifecycle state.
const DetailRole = "role_may_not_manage_lifecycle"

// SystemPrincipal is the actor of background runs.
var SystemPrincipal = access.Principal{User: "system:lifecycle", Role: access.RoleAdmin, Tenants: []string{access.AllTenants}}

// attempt is one state-changing request on its way through the checks.
type attempt struct {
	action  string
	tenant  string
	traceID string
	reason  string
	// detail names the object acted on (hold or job ID) once allowed.
	detail string
}

// authorize checks an attempt and records it in the access log, allowed or
// denied, before anything changes. bad is a validation error found by the
// caller; it is recorded as an invalid request.
func (m *Manager) authorize(ctx context.Context, p access.Principal, a attempt, bad error) error {
	e := ledgerstore.AccessEntry{EventID: newID(""), At: m.stamp(), Actor: p.User, Role: string(p.Role), Action: a.action,
		Tenant: a.tenant, TraceID: a.traceID, Reason: a.reason, Outcome: access.OutcomeAllowed, Detail: a.detail}
	var denied error
	switch {
	case p.User == "":
		e.Detail, denied = access.DetailInvalidInput, fmt.Errorf("%w: the actor is unknown", access.ErrDenied)
	case bad != nil:
		// Only the parts that passed their checks go on record.
		e.Detail, denied = access.DetailInvalidInput, bad
		if checkReason(e.Reason) != nil {
			e.Reason = ""
		}
		if !ledger.ValidTraceID(e.TraceID) {
			e.TraceID = ""
		}
		if contentstore.ValidateTenant(e.Tenant) != nil {
			e.Tenant = ""
		}
	case p.Role != access.RoleAdmin:
		e.Detail, denied = DetailRole, fmt.Errorf("%w: role %q may not change holds, deletions or expiry", access.ErrDenied, p.Role)
	case a.tenant != "" && !p.MayAccessTenant(a.tenant) || a.tenant == "" && !p.MayAccessTenant(access.AllTenants):
		e.Detail, denied = access.DetailTenant, fmt.Errorf("%w: tenant not granted", access.ErrDenied)
	case strings.TrimSpace(a.reason) == "":
		e.Detail, denied = access.DetailReason, fmt.Errorf("%w: a reason is required", access.ErrDenied)
	}
	if denied != nil {
		e.Outcome = access.OutcomeDenied
	}
	if err := m.ledger.InsertAccess(ctx, e); err != nil {
		return fmt.Errorf("lifecycle: record the attempt (nothing changed): %w", err)
	}
	return denied
}

// recordFailure notes in the access log that an allowed operation failed.
func (m *Manager) recordFailure(ctx context.Context, p access.Principal, a attempt) {
	e := ledgerstore.AccessEntry{EventID: newID(""), At: m.stamp(), Actor: p.User, Role: string(p.Role), Action: a.action,
		Tenant: a.tenant, TraceID: a.traceID, Reason: a.reason, Outcome: access.OutcomeFailed, Detail: a.detail}
	if err := m.ledger.InsertAccess(context.WithoutCancel(ctx), e); err != nil {
		m.logger.Error("lifecycle: record failure in access log", "action", a.action, "err", err)
	}
}

func checkReason(reason string) error {
	if err := checkText(reason, MaxReasonLen); err != nil {
		return invalid("reason %v", err)
	}
	return nil
}

// mayRead reports whether p may see lifecycle records of a tenant ("" for
// records that span tenants, which need a grant of all tenants).
func mayRead(p access.Principal, tenant string) error {
	if p.User == "" {
		return fmt.Errorf("%w: the reader is unknown", access.ErrDenied)
	}
	if tenant == "" {
		tenant = access.AllTenants
	}
	if !p.MayAccessTenant(tenant) {
		return fmt.Errorf("%w: tenant not granted", access.ErrDenied)
	}
	return nil
}

// query runs a named query with parameters and decodes each row into a T.
func query[T any](ctx context.Context, m *Manager, name string, params map[string]any) ([]T, error) {
	out, err := storage.QueryRows[T](ctx, m.eng, queries.MustGet(name), params)
	if err != nil {
		return nil, fmt.Errorf("lifecycle: %s: %w", name, err)
	}
	return out, nil
}

// exec runs a named statement with parameters.
func (m *Manager) exec(ctx context.Context, name string, params map[string]any) error {
	stmt, err := m.ledger.Statement(name)
	if err != nil {
		return err
	}
	q, err := storage.Bind(stmt, params)
	if err != nil {
		return err
	}
	if err := m.eng.Exec(ctx, q); err != nil {
		return fmt.Errorf("lifecycle: %s: %w", name, err)
	}
	return nil
}

// insert appends rows through a named INSERT … FORMAT JSONEachRow.
func insert[T any](ctx context.Context, m *Manager, name string, rows ...T) error {
	if len(rows) == 0 {
		return nil
	}
	var buf bytes.Buffer
	buf.WriteString(queries.MustGet(name))
	buf.WriteByte('\n')
	enc := json.NewEncoder(&buf)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("lifecycle: encode row: %w", err)
		}
	}
	if err := m.eng.Exec(ctx, buf.String()); err != nil {
		return fmt.Errorf("lifecycle: %s: %w", name, err)
	}
	return nil
}

// errText keeps an error for the record: bounded, one line. Errors of the
// store and the ledger carry no content.
func errText(err error) string {
	s := strings.ReplaceAll(err.Error(), "\n", " ")
	if len(s) > 500 {
		s = strings.ToValidUTF8(s[:500], "")
	}
	return s
}
