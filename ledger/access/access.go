// Package access is the one path through which stored content is read: it
// checks role and tenant, requires a stated reason, confirms the reference
// belongs to the named call, and records every attempt — allowed, denied or
// failed — in the ledger's access log before any content is handed out.
package access

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// Role is what a person may do.
type Role string

// Roles, in increasing power.
const (
	// RoleViewer sees ledger metadata, never content.
	RoleViewer Role = "viewer"
	// RoleAuditor may reveal content, with a reason.
	RoleAuditor Role = "auditor"
	// RoleAdmin may also manage holds and deletions and read the access log.
	RoleAdmin Role = "admin"
)

// AllTenants in Principal.Tenants grants every tenant.
const AllTenants = "*"

// Principal is who asks.
type Principal struct {
	User    string
	Role    Role
	Tenants []string
}

// MayAccessTenant reports whether the principal's grant covers tenant.
func (p Principal) MayAccessTenant(tenant string) bool {
	return slices.Contains(p.Tenants, AllTenants) || slices.Contains(p.Tenants, tenant)
}

// CanReveal reports whether the role may see content.
func (p Principal) CanReveal() bool { return p.Role == RoleAuditor || p.Role == RoleAdmin }

// RevealRequest names one piece of content of one call.
type RevealRequest struct {
	Tenant  string
	TraceID string
	Ref     string
	Reason  string
}

// Outcomes and denial details recorded in the access log.
const (
	OutcomeAllowed = "allowed"
	OutcomeDenied  = "denied"
	OutcomeFailed  = "failed"

	DetailRole         = "role_may_not_reveal"
	DetailTenant       = "tenant_not_granted"
	DetailReason       = "reason_missing"
	DetailRef          = "ref_not_in_trace"
	DetailNotFound     = "content_not_found"
	DetailUnavailable  = "store_unavailable"
	DetailInvalidInput = "invalid_request"
)

// ErrDenied is returned for every refused reveal; the error says why in
// words that carry no content.
var ErrDenied = errors.New("access denied")

// MaxReasonLen bounds the stated reason.
const MaxReasonLen = ledgerstore.MaxReasonLen

// ErrNoContentStore is returned when no content store is configured; the
// attempt is still recorded.
var ErrNoContentStore = errors.New("access: no content store is configured")

// Reader reveals content through the checks and the log.
type Reader struct {
	// Content may be nil: attempts are then checked, recorded and fail.
	Content contentstore.Store
	Ledger  *ledgerstore.Store
}

// ActionReveal records an attempt to see content.
const ActionReveal = "reveal"

// Reveal returns the content named by req if p may see it, recording the
// attempt first. If the record cannot be written, no content is returned.
func (r *Reader) Reveal(ctx context.Context, p Principal, req RevealRequest) ([]byte, error) {
	e := ledgerstore.AccessEntry{EventID: newEventID(), At: time.Now().UTC(), Actor: p.User, Role: string(p.Role), Action: ActionReveal,
		Tenant: req.Tenant, TraceID: req.TraceID, Ref: req.Ref, Reason: strings.TrimSpace(req.Reason)}
	content, detail, err := r.check(ctx, p, req, e.Reason)
	switch {
	case err == nil:
		e.Outcome = OutcomeAllowed
	case errors.Is(err, ErrDenied):
		e.Outcome, e.Detail = OutcomeDenied, detail
	default:
		e.Outcome, e.Detail = OutcomeFailed, detail
	}
	if e.Outcome != OutcomeAllowed {
		// Only the parts that passed their checks go on record.
		e.DropInvalid()
	}
	if logErr := r.Ledger.InsertAccess(ctx, e); logErr != nil {
		return nil, fmt.Errorf("access: record the attempt (nothing revealed): %w", logErr)
	}
	if err != nil {
		return nil, err
	}
	return content, nil
}

func (r *Reader) check(ctx context.Context, p Principal, req RevealRequest, reason string) ([]byte, string, error) {
	if p.User == "" || !ledger.ValidTraceID(req.TraceID) || !utf8.ValidString(reason) || len(reason) > MaxReasonLen {
		return nil, DetailInvalidInput, fmt.Errorf("%w: invalid request", ErrDenied)
	}
	ref, err := contentstore.ParseRef(req.Ref)
	if err != nil || len(req.Ref) > ledgerstore.MaxRefLen {
		return nil, DetailInvalidInput, fmt.Errorf("%w: the ref is not a content reference", ErrDenied)
	}
	if !p.CanReveal() {
		return nil, DetailRole, fmt.Errorf("%w: role %q may not reveal content", ErrDenied, p.Role)
	}
	if !p.MayAccessTenant(req.Tenant) {
		return nil, DetailTenant, fmt.Errorf("%w: tenant not granted", ErrDenied)
	}
	if reason == "" {
		return nil, DetailReason, fmt.Errorf("%w: a reason is required", ErrDenied)
	}
	if ref.Tenant != req.Tenant {
		return nil, DetailRef, fmt.Errorf("%w: reference does not belong to this tenant", ErrDenied)
	}
	if r.Content == nil {
		return nil, DetailUnavailable, ErrNoContentStore
	}
	found, err := r.referenced(ctx, req.TraceID, req.Tenant, req.Ref)
	if err != nil {
		return nil, DetailUnavailable, fmt.Errorf("access: read ledger: %w", err)
	}
	if !found {
		return nil, DetailRef, fmt.Errorf("%w: reference is not part of this trace", ErrDenied)
	}
	content, err := r.Content.Get(ctx, ref)
	switch {
	case errors.Is(err, contentstore.ErrNotFound):
		return nil, DetailNotFound, fmt.Errorf("access: %w", err)
	case err != nil:
		return nil, DetailUnavailable, fmt.Errorf("access: %w", err)
	}
	return content, "", nil
}

// referenced reports whether a call of the trace in tenant, or another
// span of it (a tool call's arguments, a document's text), references ref:
// the call's set holds its log records' references too; a log record of
// another span on record is that span's.
func (r *Reader) referenced(ctx context.Context, traceID, tenant, ref string) (bool, error) {
	calls, err := r.Ledger.CallsByTrace(ctx, traceID)
	if err != nil {
		return false, err
	}
	for _, c := range calls {
		if c.Tenant == tenant && slices.Contains(c.Refs(), ref) {
			return true, nil
		}
	}
	spans, err := r.Ledger.EvidenceByTrace(ctx, traceID)
	if err != nil {
		return false, err
	}
	onRecord := map[string]bool{}
	for _, e := range spans {
		if e.Tenant == tenant && slices.Contains(e.ContentRefs, ref) {
			return true, nil
		}
		onRecord[e.SpanID] = e.Tenant == tenant
	}
	links, err := r.Ledger.LogRefsByTrace(ctx, tenant, traceID)
	if err != nil {
		return false, err
	}
	for _, l := range links {
		if l.Ref == ref && onRecord[l.SpanID] {
			return true, nil
		}
	}
	return false, nil
}

func newEventID() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return hex.EncodeToString(id[:])
}

// ActionView records that a person looked at a trace's ledger metadata.
const ActionView = "view"

// View is one tenant's part of a look at a trace: who looked, in which
// tenant.
type View struct {
	Principal Principal
	Tenant    string
}

// RecordView records that each viewer looked at the evidence of traceID in
// their tenant, all in one write: a trace that spans tenants is on record
// in each of them, or the look fails. Metadata carries no content, so no
// reason is required, but every look at a complaint is on record.
func RecordView(ctx context.Context, l *ledgerstore.Store, traceID string, views ...View) error {
	entries := make([]ledgerstore.AccessEntry, len(views))
	for i, v := range views {
		entries[i] = entry(v.Principal, ActionView, v.Tenant, traceID, "")
	}
	if err := l.InsertAccess(ctx, entries...); err != nil {
		return fmt.Errorf("access: record %s: %w", ActionView, err)
	}
	return nil
}

// Changes to who holds a credential: on record like a reveal, once per
// tenant the credential grants, so each tenant's log shows who could act
// in it.
const (
	ActionTokenCreate = "token_create"
	ActionTokenRevoke = "token_revoke"
)

// RecordChange records an administrative change p made in tenant; detail
// names what changed and never holds a secret.
func RecordChange(ctx context.Context, l *ledgerstore.Store, p Principal, action, tenant, detail string) error {
	return record(ctx, l, p, action, tenant, "", detail)
}

func record(ctx context.Context, l *ledgerstore.Store, p Principal, action, tenant, traceID, detail string) error {
	if err := l.InsertAccess(ctx, entry(p, action, tenant, traceID, detail)); err != nil {
		return fmt.Errorf("access: record %s: %w", action, err)
	}
	return nil
}

// entry is an allowed action of p, now.
func entry(p Principal, action, tenant, traceID, detail string) ledgerstore.AccessEntry {
	return ledgerstore.AccessEntry{EventID: newEventID(), At: time.Now().UTC(), Actor: p.User, Role: string(p.Role), Action: action,
		Tenant: tenant, TraceID: traceID, Outcome: OutcomeAllowed, Detail: detail}
}
