package ledgerstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// AccessEntry is one access-log row: a reveal of content, a denied attempt,
// an export or a state change, with who, when, why and what happened.
type AccessEntry struct {
	EventID string    `json:"event_id"`
	At      time.Time `json:"at"`
	Actor   string    `json:"actor"`
	Role    string    `json:"role"`
	Action  string    `json:"action"`
	Tenant  string    `json:"tenant"`
	TraceID string    `json:"trace_id"`
	Ref     string    `json:"ref"`
	Reason  string    `json:"reason"`
	Outcome string    `json:"outcome"`
	Detail  string    `json:"detail"`
}

// Bounds of what an access-log row may hold, so that a hostile request
// cannot make the record of itself unbounded.
const (
	MaxReasonLen = 1000
	MaxRefLen    = 1024
)

// errInvalidAccess is returned for an entry outside the bounds.
var errInvalidAccess = errors.New("ledger: access entry has an invalid trace ID, or a reason or ref that is too long or not UTF-8")

func validAccessText(s string, max int) bool { return len(s) <= max && utf8.ValidString(s) }

// validAccessTrace: empty, or a trace ID in either case (some callers
// record the ID as it was given before normalising it).
func validAccessTrace(id string) bool { return id == "" || ledger.ValidTraceID(strings.ToLower(id)) }

// DropInvalid blanks the fields of an attempt that failed their checks —
// a trace ID that is not one, a reason or ref that is too long or not
// UTF-8 — so that the attempt can still be recorded with the rest.
func (e *AccessEntry) DropInvalid() {
	if !validAccessTrace(e.TraceID) {
		e.TraceID = ""
	}
	if !validAccessText(e.Reason, MaxReasonLen) {
		e.Reason = ""
	}
	if !validAccessText(e.Ref, MaxRefLen) {
		e.Ref = ""
	}
}

// InsertAccess appends access-log rows in one statement: all of them or,
// on an error, none. It is written synchronously: the caller hands out
// nothing until this returns without error. An entry with fields out of
// bounds is refused, and with it the others (see DropInvalid).
func (s *Store) InsertAccess(ctx context.Context, entries ...AccessEntry) error {
	var rows []byte
	for _, e := range entries {
		if !validAccessTrace(e.TraceID) || !validAccessText(e.Reason, MaxReasonLen) || !validAccessText(e.Ref, MaxRefLen) {
			return errInvalidAccess
		}
		row, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("ledger: encode access entry: %w", err)
		}
		rows = append(append(rows, row...), '\n')
	}
	if len(rows) == 0 {
		return nil
	}
	if err := s.eng.Insert(ctx, queries.MustGet("insert_access_log"), "JSONEachRow", rows); err != nil {
		return fmt.Errorf("ledger: insert %d access entries: %w", len(entries), err)
	}
	return nil
}

// AccessFilter selects access-log rows; empty fields select all.
type AccessFilter struct {
	Tenant  string
	Actor   string
	Action  string
	Outcome string
	Since   time.Time
	Limit   uint64
}

// AccessLog returns access-log rows, newest first.
func (s *Store) AccessLog(ctx context.Context, f AccessFilter) ([]AccessEntry, error) {
	if f.Limit == 0 {
		f.Limit = 1000
	}
	if f.Since.IsZero() {
		f.Since = time.Unix(0, 0)
	}
	var out []AccessEntry
	err := s.query(ctx, "access_log", map[string]any{"tenant": f.Tenant, "actor": f.Actor,
		"action": f.Action, "outcome": f.Outcome, "since": f.Since, "limit": f.Limit}, storage.DecodeRows(&out))
	return out, err
}
