// Package views answers the read-only questions the UI asks of the ledger:
// lists of calls, the complaint search, costs, time series, latency and the
// values each filter can take. Every query reads llm_calls FINAL (one row per
// call however often it was delivered), only in the tenants the caller is
// granted, with values bound as typed parameters.
package views

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// ErrInvalid marks errors caused by the caller's input (a bad filter, query
// or cursor); the API answers them with 400. Messages name the field, never
// its value.
var ErrInvalid = errors.New("invalid input")

// AllTenants in Filter.Tenants grants every tenant.
const AllTenants = "*"

// Bounds on input, so a request cannot make the engine parse or compare
// arbitrarily large values.
const (
	maxValueLen = 1024
	maxTenants  = 10000
)

// Filter selects calls.
type Filter struct {
	// Tenants are the tenants the caller is granted; a list containing
	// AllTenants grants every tenant. Nil or empty grants none, so a
	// caller that forgets the grants sees nothing rather than everything.
	Tenants []string
	// Tenant, Service, Model, Provider and Status narrow the calls; ""
	// means any. Model matches the response model or the request model.
	Tenant, Service, Model, Provider, Status string
	// From and To bound start_time to [From, To); zero means unbounded.
	From, To time.Time
}

// The instants an unbounded range is bound to: the ends of the engine's
// DateTime64(9) range.
var (
	minTime = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2261, 12, 31, 23, 59, 59, 999999999, time.UTC)
)

// Validate reports the first problem with f, wrapping ErrInvalid.
func (f Filter) Validate() error {
	if len(f.Tenants) > maxTenants {
		return invalid("filter: more than %d granted tenants", maxTenants)
	}
	for _, t := range f.Tenants {
		if err := checkValue("granted tenant", t); err != nil {
			return err
		}
	}
	for _, v := range []struct{ name, value string }{
		{"tenant", f.Tenant}, {"service", f.Service}, {"model", f.Model}, {"provider", f.Provider},
	} {
		if err := checkValue(v.name, v.value); err != nil {
			return err
		}
	}
	switch f.Status {
	case "", ledger.StatusOK, ledger.StatusError, ledger.StatusUnset:
	default:
		return invalid("filter: status must be %s, %s or %s", ledger.StatusOK, ledger.StatusError, ledger.StatusUnset)
	}
	return checkRange(f.From, f.To)
}

func checkRange(from, to time.Time) error {
	for _, t := range []time.Time{from, to} {
		if !t.IsZero() && (t.Before(minTime) || t.After(maxTime)) {
			return invalid("time range: times must lie within the years 1900–2261")
		}
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		return invalid("time range: from must be before to")
	}
	return nil
}

// checkValue accepts what a stored string column can hold and a person can
// type: bounded, valid UTF-8, no NUL.
func checkValue(name, v string) error {
	switch {
	case len(v) > maxValueLen:
		return invalid("%s: longer than %d bytes", name, maxValueLen)
	case !utf8.ValidString(v):
		return invalid("%s: not valid UTF-8", name)
	case strings.IndexByte(v, 0) >= 0:
		return invalid("%s: contains a NUL byte", name)
	}
	return nil
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("views: %w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// params binds the conditions of views_filter.sql.
func (f Filter) params() (map[string]any, error) {
	from, to := f.From, f.To
	if from.IsZero() {
		from = minTime
	}
	if to.IsZero() {
		to = maxTime
	}
	params := map[string]any{
		"tenant": f.Tenant, "service": f.Service, "model": f.Model, "provider": f.Provider, "status": f.Status,
		"from": from, "to": to,
	}
	if err := storage.BindTenants(params, slices.Contains(f.Tenants, AllTenants), f.Tenants); err != nil {
		return nil, fmt.Errorf("views: %w", err)
	}
	return params, nil
}

// query runs the named views query (see bind), calling fn with each row.
func query(ctx context.Context, store *ledgerstore.Store, name string, f Filter, params map[string]any, fn func(row []byte) error) error {
	q, err := bind(name, f, params)
	if err != nil {
		return err
	}
	if err := store.Engine().QueryJSON(ctx, q, fn); err != nil {
		return fmt.Errorf("views: %s: %w", name, err)
	}
	return nil
}

// bind returns the named views query with f's conditions in place of its
// {filter}, f's and the query's own params bound, and the views settings.
func bind(name string, f Filter, params map[string]any) (string, error) {
	return bindSQL(name, queries.MustGet(name), f, params)
}

// bindSQL is bind of the text sql, named name in errors.
func bindSQL(name, sql string, f Filter, params map[string]any) (string, error) {
	if err := f.Validate(); err != nil {
		return "", err
	}
	bound, err := f.params()
	if err != nil {
		return "", err
	}
	for k, v := range params {
		bound[k] = v
	}
	sql = strings.ReplaceAll(sql, "{filter}", filterSQL()) + "\n" + queries.MustGet("views_settings")
	q, err := storage.Bind(sql, bound)
	if err != nil {
		return "", fmt.Errorf("views: %s: %w", name, err)
	}
	return q, nil
}

// filterSQL is views_filter.sql without its comment lines, parenthesised
// so it composes with the conditions around it.
var filterSQL = sync.OnceValue(func() string {
	var b strings.Builder
	b.WriteString("(\n")
	for _, line := range strings.Split(queries.MustGet("views_filter"), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	b.WriteString(")")
	return b.String()
})
