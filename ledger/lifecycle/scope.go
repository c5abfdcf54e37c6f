package lifecycle

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/access"
)

// Scope selects calls of one tenant: all of them, or those of one end user,
// one trace and/or with a start time in [From, To). Every part that is set
// narrows the selection.
type Scope struct {
	Tenant     string    `json:"tenant"`
	EndUserRef string    `json:"end_user_ref,omitempty"`
	TraceID    string    `json:"trace_id,omitempty"`
	From       time.Time `json:"from,omitzero"`
	To         time.Time `json:"to,omitzero"`
}

// Open ends of a time range are stored as these instants, inside the range
// of DateTime64(9), so that matching is one comparison.
var (
	openFrom = time.Unix(0, 0).UTC()
	openTo   = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)
)

// Limits on what a request may carry.
const (
	MaxEndUserRefLen = 1024
	MaxReasonLen     = access.MaxReasonLen
)

// ErrInvalid is returned for a request that cannot be carried out as
// given; the message says which part is wrong, never its value.
var ErrInvalid = errors.New("lifecycle: invalid request")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// normalize validates the scope and returns it in canonical form (trace ID
// in lower case, times in UTC).
func (s Scope) normalize() (Scope, error) {
	if err := contentstore.ValidateTenant(s.Tenant); err != nil {
		return Scope{}, invalid("tenant: %v", err)
	}
	if err := checkText(s.EndUserRef, MaxEndUserRefLen); err != nil {
		return Scope{}, invalid("end_user_ref %v", err)
	}
	if s.TraceID != "" {
		s.TraceID = strings.ToLower(s.TraceID)
		if !ledger.ValidTraceID(s.TraceID) {
			return Scope{}, invalid("trace_id must be 32 hex digits, not all zero")
		}
	}
	for _, t := range []*time.Time{&s.From, &s.To} {
		if t.IsZero() {
			continue
		}
		*t = t.UTC()
		if t.Before(openFrom) || !t.Before(openTo) {
			return Scope{}, invalid("time range must lie between %s and %s", openFrom.Format(time.DateOnly), openTo.Format(time.DateOnly))
		}
	}
	if !s.From.IsZero() && !s.To.IsZero() && !s.From.Before(s.To) {
		return Scope{}, invalid("time range: from must be before to")
	}
	return s, nil
}

// checkText accepts valid UTF-8 without control characters up to max bytes.
func checkText(s string, max int) error {
	switch {
	case len(s) > max:
		return fmt.Errorf("is longer than %d bytes", max)
	case !utf8.ValidString(s):
		return errors.New("is not valid UTF-8")
	case strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }):
		return errors.New("contains control characters")
	}
	return nil
}

// scopeCols is a scope as stored: open ends as sentinel instants.
type scopeCols struct {
	Tenant     string    `json:"tenant"`
	EndUserRef string    `json:"end_user_ref"`
	TraceID    string    `json:"trace_id"`
	FromTime   time.Time `json:"from_time"`
	ToTime     time.Time `json:"to_time"`
}

func (s Scope) cols() scopeCols {
	c := scopeCols{Tenant: s.Tenant, EndUserRef: s.EndUserRef, TraceID: s.TraceID, FromTime: s.From, ToTime: s.To}
	if c.FromTime.IsZero() {
		c.FromTime = openFrom
	}
	if c.ToTime.IsZero() {
		c.ToTime = openTo
	}
	return c
}

func (c scopeCols) scope() Scope {
	s := Scope{Tenant: c.Tenant, EndUserRef: c.EndUserRef, TraceID: c.TraceID, From: c.FromTime.UTC(), To: c.ToTime.UTC()}
	if !s.From.After(openFrom) {
		s.From = time.Time{}
	}
	if !s.To.Before(openTo) {
		s.To = time.Time{}
	}
	return s
}
