package views

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
)

// CallSummary is one call as lists and search results show it.
type CallSummary struct {
	Tenant        string    `json:"tenant"`
	TraceID       string    `json:"trace_id"`
	SpanID        string    `json:"span_id"`
	ServiceName   string    `json:"service_name"`
	StartTime     time.Time `json:"start_time"`
	DurationMS    float64   `json:"duration_ms"`
	Operation     string    `json:"operation"`
	Provider      string    `json:"provider"`
	RequestModel  string    `json:"request_model"`
	ResponseModel string    `json:"response_model"`
	ResponseID    string    `json:"response_id"`
	Status        string    `json:"status"`
	ErrorClass    string    `json:"error_class"`
	// InputTokens and OutputTokens are nil when the call did not report them.
	InputTokens  *int64 `json:"input_tokens"`
	OutputTokens *int64 `json:"output_tokens"`
	// CostUSD is the exact decimal cost, nil when unknown (CostStatus says
	// why).
	CostUSD    *string `json:"cost_usd"`
	CostStatus string  `json:"cost_status"`
	EndUserRef string  `json:"end_user_ref"`
}

// Page sizes of ListCalls and Search.
const (
	DefaultListLimit   = 100
	DefaultSearchLimit = 50
	MaxLimit           = 1000
)

// search is what views_search.sql looks for: q as a response ID and as an
// end user within [userFrom, userTo), and as a trace ID when traceID is
// set. userBound bounds the end user's newest rows read (0: every row).
type search struct {
	q, traceID       string
	userFrom, userTo time.Time
	userBound        uint32
}

// ListCalls returns the calls f selects, newest first, at most limit (0 means
// DefaultListLimit; more than MaxLimit means MaxLimit). before is "" for the
// first page, else the next token of the previous page; next is "" on the
// last page.
func ListCalls(ctx context.Context, store *ledgerstore.Store, f Filter, limit int, before string) (calls []CallSummary, next string, err error) {
	if limit, err = pageSize(limit, DefaultListLimit); err != nil {
		return nil, "", err
	}
	var after *cursor
	if before != "" {
		c, cursorErr := decodeCursor(before)
		if cursorErr != nil {
			return nil, "", cursorErr
		}
		after = &c
	}
	// One row more than the page tells whether another page follows.
	calls, err = listCalls(ctx, store, f, after, limit+1)
	if err != nil || len(calls) <= limit {
		return calls, "", err
	}
	calls = calls[:limit]
	last := calls[limit-1]
	return calls, cursor{StartTime: last.StartTime, Tenant: last.Tenant, TraceID: last.TraceID, SpanID: last.SpanID}.encode(), nil
}

func pageSize(limit, def int) (int, error) {
	switch {
	case limit < 0:
		return 0, invalid("limit: must not be negative")
	case limit == 0:
		return def, nil
	}
	return min(limit, MaxLimit), nil
}

func listCalls(ctx context.Context, store *ledgerstore.Store, f Filter, after *cursor, limit int) ([]CallSummary, error) {
	params := map[string]any{
		"paged": uint32(0), "before_time": minTime, "before_tenant": "", "before_trace_id": "", "before_span_id": "",
		"limit": uint32(limit),
	}
	if after != nil {
		params["paged"] = uint32(1)
		params["before_time"], params["before_tenant"] = after.StartTime, after.Tenant
		params["before_trace_id"], params["before_span_id"] = after.TraceID, after.SpanID
	}
	calls := []CallSummary{}
	err := query(ctx, store, "views_calls", f, params, storage.DecodeRows(&calls))
	return calls, err
}

// searchCalls is the first page of the calls the first reading of s that
// finds any (trace ID, response ID, end user) finds among those f selects,
// and that reading's kind; when none finds a call, the kind of the first
// reading tried. It reads a bounded number of the end user's newest rows
// first (most users have fewer), and reads again without the bound when
// that may have left calls out.
func searchCalls(ctx context.Context, store *ledgerstore.Store, f Filter, s search, limit int) (string, []CallSummary, error) {
	bounded := s
	bounded.userBound = uint32(userRowsPerCall * limit)
	kind, calls, short, err := searchOnce(ctx, store, f, bounded, limit)
	if err != nil || !short {
		return kind, calls, err
	}
	kind, calls, _, err = searchOnce(ctx, store, f, s, limit)
	return kind, calls, err
}

// userRowsPerCall bounds the end user's rows read per call of the page at
// first: the rows of a call that are not its newest version (rewrites of
// its trace, not yet merged away) or that f excludes are read too.
const userRowsPerCall = 20

// searchOnce is one run of views_search.sql. short reports that the page
// may lack calls the end-user reading left out at s.userBound: the page is
// not full, and is empty (which reading found nothing is not known) or
// comes from an end-user reading that read as many rows as its bound.
func searchOnce(ctx context.Context, store *ledgerstore.Store, f Filter, s search, limit int) (kind string, calls []CallSummary, short bool, err error) {
	var rows []struct {
		CallSummary
		Reading  int    `json:"reading"`
		UserRows uint64 `json:"user_rows"`
	}
	if err = query(ctx, store, "views_search", f, searchParams(s, limit), storage.DecodeRows(&rows)); err != nil {
		return "", nil, false, err
	}
	kind = KindResponseID
	if s.traceID != "" {
		kind = KindTraceID
	}
	calls = []CallSummary{}
	for _, r := range rows {
		if r.Reading != rows[0].Reading {
			break // rows come in reading order
		}
		if r.Reading < 0 || r.Reading >= len(readings) {
			return "", nil, false, fmt.Errorf("views: views_search: reading %d", r.Reading)
		}
		kind = readings[r.Reading]
		calls = append(calls, r.CallSummary)
	}
	if s.userBound == 0 || len(calls) >= limit {
		return kind, calls, false, nil
	}
	return kind, calls, len(calls) == 0 || (kind == KindEndUser && rows[0].UserRows >= uint64(s.userBound)), nil
}

// searchParams binds views_search.sql's own parameters.
func searchParams(s search, limit int) map[string]any {
	bound := s.userBound
	if bound == 0 {
		bound = math.MaxUint32
	}
	return map[string]any{"q": s.q, "trace_id": s.traceID, "user_from": s.userFrom, "user_to": s.userTo,
		"user_bound": bound, "limit": uint32(limit)}
}

// Kinds of Search results.
const (
	KindTraceID    = "trace_id"
	KindResponseID = "response_id"
	KindEndUser    = "end_user"
)

// readings are the kinds in the order Search tries them, as views_search.sql
// numbers its reading column.
var readings = []string{KindTraceID, KindResponseID, KindEndUser}

// Limits of Search's query text and its default end-user window.
const (
	MaxQueryLen   = 1024
	EndUserWindow = 30 * 24 * time.Hour
)

// Search finds the calls of a complaint in the granted tenants (as in
// Filter.Tenants: AllTenants for every one, none when empty), newest first, at most limit (0 means DefaultSearchLimit).
// q is read, in this order, as
//
//   - a trace ID, when it is 32 hex digits (upper case is accepted and
//     lowercased, as the ledger stores trace IDs);
//   - a provider response ID, exactly;
//   - an end-user reference, exactly, among calls that started in
//     [from, to): zero to means now, zero from means 30 days before to.
//
// The first reading that finds calls gives kind. A trace-shaped q that finds
// no trace is still tried as the other two, since response IDs and hashed
// end-user references can look the same. When nothing is found, kind is the
// first reading tried.
func Search(ctx context.Context, store *ledgerstore.Store, q string, from, to time.Time, tenants []string, limit int) (kind string, results []CallSummary, err error) {
	if err = CheckQuery(q); err != nil {
		return "", nil, err
	}
	if limit, err = pageSize(limit, DefaultSearchLimit); err != nil {
		return "", nil, err
	}
	if to.IsZero() {
		to = time.Now().UTC()
	}
	if from.IsZero() {
		from = to.Add(-EndUserWindow)
	}
	if err = checkRange(from, to); err != nil {
		return "", nil, err
	}
	s := search{q: q, userFrom: from, userTo: to}
	if id := strings.ToLower(q); ledger.ValidTraceID(id) {
		s.traceID = id
	}
	return searchCalls(ctx, store, Filter{Tenants: tenants}, s, limit)
}

// CheckQuery reports, wrapping ErrInvalid, why q cannot be searched for:
// empty, longer than MaxQueryLen bytes, invalid UTF-8 or holding a NUL.
func CheckQuery(q string) error {
	switch {
	case q == "":
		return invalid("search: the query is empty")
	case len(q) > MaxQueryLen:
		return invalid("search: the query is longer than %d bytes", MaxQueryLen)
	case !utf8.ValidString(q):
		return invalid("search: the query is not valid UTF-8")
	case strings.IndexByte(q, 0) >= 0:
		return invalid("search: the query contains a NUL byte")
	}
	return nil
}
