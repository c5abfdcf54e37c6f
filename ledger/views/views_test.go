package views

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/ledgertest"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/queries"
)

var store *ledgerstore.Store

func TestMain(m *testing.M) { ledgertest.Main(m, &store) }

// t0 is the start of the curated calls' first day; now-relative calls live
// in tenant "recent", bulk ones in 2024 and the many tenants in 2023, so the
// curated range [t0, t0+3 days) holds exactly the curated calls.
var t0 = time.Date(2025, 1, 6, 0, 0, 0, 0, time.UTC)

const (
	traceA = "a0000000000000000000000000000001"
	traceB = "a0000000000000000000000000000002"
	traceC = "a0000000000000000000000000000003"
	traceD = "d0000000000000000000000000000004"
	traceE = "d0000000000000000000000000000005"
	traceF = "a0000000000000000000000000000006"
	// hashedUser is an end-user reference that looks like a trace ID.
	hashedUser = "0123456789abcdef0123456789abcdef"
)

func at(h, m int) time.Time { return t0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }

// call completes c, a call row with what the views read, as the ledger
// exporter would (span name, end time, cost status, error class); the rest
// keeps its zero value, as a span without those attributes gives.
func call(c ledger.Call) ledger.Call {
	c.SpanName, c.Operation, c.IngestedAt = "chat "+c.RequestModel, "chat", c.StartTime
	c.EndTime = c.StartTime.Add(time.Duration(c.DurationMS * float64(time.Millisecond)))
	c.CostStatus = string(pricing.StatusOK)
	if c.CostUSD == nil {
		c.CostStatus = string(pricing.StatusUnknownModel)
	}
	if c.Status == ledger.StatusError {
		c.ErrorClass = ledger.ErrClassRateLimited
	}
	return c
}

// The curated calls, by name.
var curated = map[string]ledger.Call{
	"a1": call(ledger.Call{Tenant: "acme", TraceID: traceA, SpanID: "0000000000000a01", ServiceName: "chat-api", StartTime: at(1, 5), DurationMS: 120, Provider: "openai", RequestModel: "gpt-4o", ResponseModel: "gpt-4o-2024-08-06", ResponseID: "chatcmpl-a1", Status: "ok", InputTokens: new(int64(100)), OutputTokens: new(int64(20)), CostUSD: new("0.0012"), EndUserRef: "user-1"}),
	"a2": call(ledger.Call{Tenant: "acme", TraceID: traceA, SpanID: "0000000000000a02", ServiceName: "chat-api", StartTime: at(1, 10), DurationMS: 480, Provider: "openai", RequestModel: "gpt-4o", ResponseModel: "gpt-4o-2024-08-06", ResponseID: "chatcmpl-a2", Status: "error", EndUserRef: "user-1"}),
	"a3": call(ledger.Call{Tenant: "acme", TraceID: traceB, SpanID: "0000000000000a03", ServiceName: "summarizer", StartTime: at(26, 0), DurationMS: 2600, Provider: "anthropic", RequestModel: "claude-sonnet-4", ResponseID: "msg_a3", Status: "unset", InputTokens: new(int64(1000)), OutputTokens: new(int64(300)), CostUSD: new("0.0075"), EndUserRef: "user-2"}),
	"a4": call(ledger.Call{Tenant: "acme", TraceID: traceC, SpanID: "0000000000000a04", ServiceName: "summarizer", StartTime: at(26, 30), DurationMS: 70000, Provider: "mistral", RequestModel: "mistral-large", ResponseModel: "mistral-large-2411", ResponseID: "cmpl-a4", Status: "ok", InputTokens: new(int64(50)), EndUserRef: "user-2"}),
	"a5": call(ledger.Call{Tenant: "acme", TraceID: traceF, SpanID: "0000000000000a05", ServiceName: "chat-api", StartTime: at(50, 30), DurationMS: 1000, Provider: "openai", RequestModel: "gpt-4o", ResponseModel: "gpt-4o-2024-08-06", ResponseID: "resp-shared", Status: "ok", InputTokens: new(int64(200)), OutputTokens: new(int64(40)), CostUSD: new("0.0024"), EndUserRef: "user-3"}),
	"g1": call(ledger.Call{Tenant: "globex", TraceID: traceD, SpanID: "0000000000000g01", ServiceName: "bot", StartTime: at(1, 20), DurationMS: 90, Provider: "openai", RequestModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18", ResponseID: "chatcmpl-g1", Status: "ok", InputTokens: new(int64(10)), OutputTokens: new(int64(5)), CostUSD: new("0.0000045"), EndUserRef: "user-1"}),
	"g2": call(ledger.Call{Tenant: "globex", TraceID: traceE, SpanID: "0000000000000g02", ServiceName: "bot", StartTime: at(50, 0), DurationMS: 300, Provider: "openai", RequestModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18", ResponseID: "resp-shared", Status: "error", InputTokens: new(int64(10)), OutputTokens: new(int64(0)), CostUSD: new("0"), EndUserRef: "user-9"}),
	// The same trace ID as a1 and a2, in another tenant.
	"g3": call(ledger.Call{Tenant: "globex", TraceID: traceA, SpanID: "0000000000000g03", ServiceName: "bot", StartTime: at(1, 6), DurationMS: 250, Provider: "openai", RequestModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18", Status: "ok", InputTokens: new(int64(5)), OutputTokens: new(int64(5)), CostUSD: new("0.000003")}),
}

// Bulk calls for paging: several months, ties on start time within and
// across tenants, nanosecond start times.
const bulkCalls, bulk2Calls, manyTenants = 1100, 5, 10001

var bulkStart = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

func bulk() []ledger.Call {
	var out []ledger.Call
	for i := 0; i < bulkCalls; i++ {
		// Groups of three calls share a start time.
		start := bulkStart.Add(time.Duration(i/3)*6*time.Hour + time.Duration(i/3)*1001)
		out = append(out, call(ledger.Call{Tenant: "bulk", TraceID: fmt.Sprintf("b%031x", i%400), SpanID: fmt.Sprintf("%016x", i), ServiceName: "batch", StartTime: start, DurationMS: 500, Provider: "openai", RequestModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18", ResponseID: fmt.Sprintf("resp-b%d", i), Status: "ok", InputTokens: new(int64(1)), OutputTokens: new(int64(1)), CostUSD: new("0.000001")}))
	}
	for i := 0; i < bulk2Calls; i++ {
		start := bulkStart.Add(time.Duration(i*7)*6*time.Hour + time.Duration(i*7)*1001)
		out = append(out, call(ledger.Call{Tenant: "bulk2", TraceID: fmt.Sprintf("b%031x", i), SpanID: fmt.Sprintf("%016x", i), ServiceName: "batch", StartTime: start, DurationMS: 500, Provider: "openai", RequestModel: "gpt-4o-mini", ResponseModel: "gpt-4o-mini-2024-07-18", Status: "ok"}))
	}
	return out
}

var loadOnce sync.Once

// load inserts every fixture once per test process. Curated and bulk calls
// go in twice, the second time in other batches, as an at-least-once queue
// may deliver them: every view must count each call once.
func load(t *testing.T) {
	t.Helper()
	var err error
	loadOnce.Do(func() {
		ctx := context.Background()
		var cur []ledger.Call
		for _, c := range curated {
			cur = append(cur, c)
		}
		now := time.Now().UTC().Truncate(time.Second)
		recent := []ledger.Call{
			call(ledger.Call{Tenant: "recent", TraceID: "e0000000000000000000000000000001", SpanID: "0000000000000r01", ServiceName: "chat-api", StartTime: now.Add(-48 * time.Hour), DurationMS: 100, Provider: "openai", RequestModel: "gpt-4o", ResponseModel: "gpt-4o", ResponseID: "r1", Status: "ok", EndUserRef: "recent-user"}),
			call(ledger.Call{Tenant: "recent", TraceID: "e0000000000000000000000000000002", SpanID: "0000000000000r02", ServiceName: "chat-api", StartTime: now.Add(-40 * 24 * time.Hour), DurationMS: 100, Provider: "openai", RequestModel: "gpt-4o", ResponseModel: "gpt-4o", ResponseID: "r2", Status: "ok", EndUserRef: "recent-user"}),
			call(ledger.Call{Tenant: "recent", TraceID: "e0000000000000000000000000000003", SpanID: "0000000000000r03", ServiceName: "chat-api", StartTime: now.Add(-24 * time.Hour), DurationMS: 100, Provider: "openai", RequestModel: "gpt-4o", ResponseModel: "gpt-4o", ResponseID: "r3", Status: "ok", EndUserRef: hashedUser}),
		}
		var many []ledger.Call
		for i := 0; i < manyTenants; i++ {
			many = append(many, call(ledger.Call{Tenant: fmt.Sprintf("zz-%05d", i), TraceID: "f0000000000000000000000000000001", SpanID: "0000000000000001", ServiceName: "batch", StartTime: time.Date(2023, 6, 1, 0, 0, i, 0, time.UTC), DurationMS: 10, Provider: "openai", RequestModel: "gpt-4o", ResponseModel: "gpt-4o", Status: "ok"}))
		}
		b := bulk()
		for _, batch := range [][]ledger.Call{cur, recent, many, b[:600], b[600:], cur[2:], b[300:900]} {
			if err = store.InsertCalls(ctx, batch); err != nil {
				return
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// every grants all tenants.
var every = []string{AllTenants}

var curatedRange = Filter{Tenants: every, From: t0, To: t0.Add(72 * time.Hour)}

func (f Filter) with(mod func(*Filter)) Filter {
	mod(&f)
	return f
}

// summary is what the views should return for a fixture call.
func summary(c ledger.Call) CallSummary {
	return CallSummary{
		Tenant: c.Tenant, TraceID: c.TraceID, SpanID: c.SpanID, ServiceName: c.ServiceName, StartTime: c.StartTime,
		DurationMS: c.DurationMS, Operation: c.Operation, Provider: c.Provider, RequestModel: c.RequestModel,
		ResponseModel: c.ResponseModel, ResponseID: c.ResponseID, Status: c.Status, ErrorClass: c.ErrorClass,
		InputTokens: c.InputTokens, OutputTokens: c.OutputTokens, CostUSD: canonicalCost(c.CostUSD), CostStatus: c.CostStatus,
		EndUserRef: c.EndUserRef,
	}
}

// canonicalCost is the engine's text of a Decimal(18, 12): no trailing zeros.
func canonicalCost(s *string) *string {
	if s == nil {
		return nil
	}
	v := *s
	if strings.Contains(v, ".") {
		v = strings.TrimSuffix(strings.TrimRight(v, "0"), ".")
	}
	return &v
}

func names(t *testing.T, got []CallSummary) []string {
	t.Helper()
	var out []string
	for _, g := range got {
		name := ""
		for n, c := range curated {
			if c.Tenant == g.Tenant && c.TraceID == g.TraceID && c.SpanID == g.SpanID {
				name = n
				if want := summary(c); !equalSummary(g, want) {
					t.Errorf("%s: got %+v\nwant %+v", n, g, want)
				}
			}
		}
		if name == "" {
			name = g.Tenant + "/" + g.ResponseID
		}
		out = append(out, name)
	}
	return out
}

func equalSummary(a, b CallSummary) bool {
	eqp := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqs := func(x, y *string) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	if !eqp(a.InputTokens, b.InputTokens) || !eqp(a.OutputTokens, b.OutputTokens) || !eqs(a.CostUSD, b.CostUSD) || !a.StartTime.Equal(b.StartTime) {
		return false
	}
	a.InputTokens, a.OutputTokens, a.CostUSD, a.StartTime = nil, nil, nil, time.Time{}
	b.InputTokens, b.OutputTokens, b.CostUSD, b.StartTime = nil, nil, nil, time.Time{}
	return a == b
}

func TestListCallsFilters(t *testing.T) {
	load(t)
	ctx := context.Background()
	cases := []struct {
		name string
		f    Filter
		want string
	}{
		{"range", curatedRange, "a5 g2 a4 a3 g1 a2 g3 a1"},
		{"granted acme", curatedRange.with(func(f *Filter) { f.Tenants = []string{"acme"} }), "a5 a4 a3 a2 a1"},
		{"granted all by star", curatedRange.with(func(f *Filter) { f.Tenants = []string{"nobody", AllTenants} }), "a5 g2 a4 a3 g1 a2 g3 a1"},
		{"granted none", curatedRange.with(func(f *Filter) { f.Tenants = []string{} }), ""},
		{"grants missing", curatedRange.with(func(f *Filter) { f.Tenants = nil }), ""},
		{"tenant not granted", curatedRange.with(func(f *Filter) { f.Tenants, f.Tenant = []string{"acme"}, "globex" }), ""},
		{"tenant", curatedRange.with(func(f *Filter) { f.Tenant = "globex" }), "g2 g1 g3"},
		{"service", curatedRange.with(func(f *Filter) { f.Service = "summarizer" }), "a4 a3"},
		{"request model", curatedRange.with(func(f *Filter) { f.Model = "gpt-4o" }), "a5 a2 a1"},
		{"response model", curatedRange.with(func(f *Filter) { f.Model = "gpt-4o-mini-2024-07-18" }), "g2 g1 g3"},
		{"model without response model", curatedRange.with(func(f *Filter) { f.Model = "claude-sonnet-4" }), "a3"},
		{"provider", curatedRange.with(func(f *Filter) { f.Provider = "mistral" }), "a4"},
		{"status unset", curatedRange.with(func(f *Filter) { f.Status = "unset" }), "a3"},
		{"status error", curatedRange.with(func(f *Filter) { f.Status = "error" }), "g2 a2"},
		{"from inclusive, to exclusive", Filter{Tenants: every, From: at(1, 6), To: at(26, 0)}, "g1 a2 g3"},
		{"all filters", Filter{Tenants: []string{"acme", "globex"}, Tenant: "acme", Service: "chat-api", Model: "gpt-4o", Provider: "openai", Status: "ok", From: t0, To: at(2, 0)}, "a1"},
	}
	for _, tc := range cases {
		got, next, err := ListCalls(ctx, store, tc.f, 0, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if g := strings.Join(names(t, got), " "); g != tc.want || next != "" {
			t.Errorf("%s: got %q next %q, want %q", tc.name, g, next, tc.want)
		}
	}
}

type key struct {
	start               time.Time
	tenant, trace, span string
}

func TestListCallsPagesThroughEveryCallOnce(t *testing.T) {
	load(t)
	ctx := context.Background()
	for _, tc := range []struct {
		tenants []string
		limit   int
	}{{[]string{"bulk", "bulk2"}, 7}, {[]string{"bulk", "bulk2"}, 100}, {[]string{"bulk", "bulk2"}, 1000}, {[]string{"bulk2"}, 1}} {
		var want []key
		for _, c := range bulk() {
			if slices.Contains(tc.tenants, c.Tenant) {
				want = append(want, key{c.StartTime, c.Tenant, c.TraceID, c.SpanID})
			}
		}
		slices.SortFunc(want, func(a, b key) int {
			return cmp.Or(b.start.Compare(a.start), cmp.Compare(b.tenant, a.tenant), cmp.Compare(b.trace, a.trace), cmp.Compare(b.span, a.span))
		})
		var got []key
		before, pages := "", 0
		for {
			calls, next, err := ListCalls(ctx, store, Filter{Tenants: tc.tenants}, tc.limit, before)
			if err != nil {
				t.Fatal(err)
			}
			pages++
			if len(calls) > tc.limit || len(calls) == 0 {
				t.Fatalf("%+v: page %d has %d calls", tc, pages, len(calls))
			}
			for _, c := range calls {
				got = append(got, key{c.StartTime, c.Tenant, c.TraceID, c.SpanID})
			}
			if next == "" {
				break
			}
			before = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%+v: %d calls in %d pages, want the %d calls in order", tc, len(got), pages, len(want))
		}
		if wantPages := (len(want) + tc.limit - 1) / tc.limit; pages != wantPages {
			t.Errorf("%+v: %d pages, want %d", tc, pages, wantPages)
		}
	}
	// Past the maximum the page is MaxLimit long.
	calls, next, err := ListCalls(ctx, store, Filter{Tenants: []string{"bulk"}}, 5000, "")
	if err != nil || len(calls) != MaxLimit || next == "" {
		t.Fatalf("limit 5000: %d calls, next %q, %v", len(calls), next, err)
	}
}

func TestListCallsRejectsBadInput(t *testing.T) {
	load(t)
	ctx := context.Background()
	good := cursor{StartTime: t0, Tenant: "acme", TraceID: traceA, SpanID: "x"}.encode()
	for name, tc := range map[string]struct {
		f      Filter
		limit  int
		before string
	}{
		"negative limit":    {Filter{}, -1, ""},
		"garbage cursor":    {Filter{}, 10, "not a cursor!"},
		"truncated cursor":  {Filter{}, 10, good[:len(good)-3]},
		"huge cursor":       {Filter{}, 10, strings.Repeat("A", maxCursorLen+1)},
		"bad filter":        {Filter{Service: "a\x00"}, 10, ""},
		"bad filter + page": {Filter{Status: "fine"}, 10, good},
	} {
		if _, _, err := ListCalls(ctx, store, tc.f, tc.limit, tc.before); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestFilterValidate(t *testing.T) {
	long := strings.Repeat("x", maxValueLen+1)
	bad := map[string]Filter{
		"invalid UTF-8 tenant":  {Tenant: "\xff"},
		"NUL in service":        {Service: "a\x00b"},
		"long model":            {Model: long},
		"NUL in provider":       {Provider: "\x00"},
		"unknown status":        {Status: "failed"},
		"bad granted tenant":    {Tenants: []string{"ok", "\xc3"}},
		"too many grants":       {Tenants: make([]string, maxTenants+1)},
		"from after to":         {From: t0.Add(time.Hour), To: t0},
		"empty range":           {From: t0, To: t0},
		"from before 1900":      {From: time.Date(1899, 12, 31, 0, 0, 0, 0, time.UTC)},
		"to after 2261":         {To: time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC)},
		"from after 2261 alone": {From: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	for name, f := range bad {
		err := f.Validate()
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
			continue
		}
		// Messages name the field, never the value.
		if strings.Contains(err.Error(), long) || strings.ContainsAny(err.Error(), "\x00") || strings.Contains(err.Error(), "\xff") {
			t.Errorf("%s: the message repeats the value: %q", name, err)
		}
	}
	good := []Filter{{}, {Tenants: []string{}}, {Tenants: []string{""}}, {Status: "ok", Model: "日本語", From: t0}, {To: t0}}
	for _, f := range good {
		if err := f.Validate(); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
}

func TestSearch(t *testing.T) {
	load(t)
	ctx := context.Background()
	day := func(f, to time.Time) [2]time.Time { return [2]time.Time{f, to} }
	curatedDays := day(t0, t0.Add(72*time.Hour))
	cases := []struct {
		name    string
		q       string
		window  [2]time.Time
		tenants []string
		kind    string
		want    string
	}{
		{"trace in all tenants", traceA, curatedDays, every, KindTraceID, "a2 g3 a1"},
		{"grants missing", traceA, curatedDays, nil, KindTraceID, ""},
		{"trace in granted tenant", traceA, curatedDays, []string{"acme"}, KindTraceID, "a2 a1"},
		{"trace upper case", strings.ToUpper(traceA), [2]time.Time{}, []string{"globex"}, KindTraceID, "g3"},
		{"trace of another tenant", traceD, curatedDays, []string{"acme"}, KindTraceID, ""},
		{"response id", "chatcmpl-a1", [2]time.Time{}, []string{"acme"}, KindResponseID, "a1"},
		{"response id of another tenant", "chatcmpl-a1", curatedDays, []string{"globex"}, KindResponseID, ""},
		{"response id in two tenants", "resp-shared", [2]time.Time{}, every, KindResponseID, "a5 g2"},
		{"response id in granted tenant", "resp-shared", [2]time.Time{}, []string{"globex", "initech"}, KindResponseID, "g2"},
		{"response id is case sensitive", "CHATCMPL-A1", curatedDays, every, KindResponseID, ""},
		{"end user", "user-1", curatedDays, []string{"acme"}, KindEndUser, "a2 a1"},
		{"end user in all tenants", "user-1", curatedDays, []string{"nobody", "*"}, KindEndUser, "g1 a2 a1"},
		{"end user outside the window", "user-1", day(at(1, 15), at(3, 0)), []string{"acme"}, KindResponseID, ""},
		{"end user, window includes from", "user-1", day(at(1, 10), at(3, 0)), every, KindEndUser, "g1 a2"},
		{"end user, default window is 30 days", "recent-user", [2]time.Time{}, every, KindEndUser, "recent/r1"},
		{"end user that looks like a trace", hashedUser, [2]time.Time{}, every, KindEndUser, "recent/r3"},
		{"end user that looks like a trace, upper case", strings.ToUpper(hashedUser), [2]time.Time{}, every, KindTraceID, ""},
		{"nothing granted", "chatcmpl-a1", [2]time.Time{}, []string{}, KindResponseID, ""},
	}
	for _, tc := range cases {
		kind, got, err := Search(ctx, store, tc.q, tc.window[0], tc.window[1], tc.tenants, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if g := strings.Join(names(t, got), " "); kind != tc.kind || g != tc.want {
			t.Errorf("%s: got %s %q, want %s %q", tc.name, kind, g, tc.kind, tc.want)
		}
	}
	// The limit caps results.
	if _, got, err := Search(ctx, store, traceA, time.Time{}, time.Time{}, every, 2); err != nil || len(got) != 2 {
		t.Errorf("limit 2: %d results, %v", len(got), err)
	}
}

func TestSearchRejectsBadInput(t *testing.T) {
	load(t)
	ctx := context.Background()
	for name, q := range map[string]string{
		"empty":        "",
		"too long":     strings.Repeat("a", MaxQueryLen+1),
		"invalid UTF8": "user-\xff",
		"NUL":          "user\x00-1",
	} {
		if _, _, err := Search(ctx, store, q, time.Time{}, time.Time{}, nil, 0); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
	if _, _, err := Search(ctx, store, "user-1", t0, t0, nil, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("empty window: %v", err)
	}
	if _, _, err := Search(ctx, store, "user-1", time.Time{}, time.Time{}, []string{"\xff"}, 0); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad tenant: %v", err)
	}
	if _, _, err := Search(ctx, store, "user-1", time.Time{}, time.Time{}, nil, -5); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative limit: %v", err)
	}
	if _, _, err := Search(ctx, store, strings.Repeat("é", MaxQueryLen/2), time.Time{}, time.Time{}, nil, 0); err != nil {
		t.Errorf("longest query: %v", err)
	}
}

func totals(calls uint64, cost *string, unknown uint64, in, out *int64) CostTotals {
	return CostTotals{Calls: calls, CostUSD: cost, CostUnknownCalls: unknown, InputTokens: in, OutputTokens: out}
}

func showTotals(c CostTotals) string {
	p := func(v *int64) string {
		if v == nil {
			return "null"
		}
		return fmt.Sprint(*v)
	}
	cost := "null"
	if c.CostUSD != nil {
		cost = *c.CostUSD
	}
	return fmt.Sprintf("calls=%d cost=%s unknown=%d in=%s out=%s", c.Calls, cost, c.CostUnknownCalls, p(c.InputTokens), p(c.OutputTokens))
}

func TestCosts(t *testing.T) {
	load(t)
	ctx := context.Background()
	acme := curatedRange.with(func(f *Filter) { f.Tenants = []string{"acme"} })
	cases := []struct {
		name  string
		f     Filter
		group string
		rows  []CostRow
		total CostTotals
		shown []string // FormatCost of each row, then of the total
	}{
		{"by day", curatedRange, GroupDay, []CostRow{
			{"2025-01-06", totals(4, new("0.0012075"), 1, new(int64(115)), new(int64(30)))},
			{"2025-01-07", totals(2, new("0.0075"), 1, new(int64(1050)), new(int64(300)))},
			{"2025-01-08", totals(2, new("0.0024"), 0, new(int64(210)), new(int64(40)))},
		}, totals(8, new("0.0111075"), 2, new(int64(1375)), new(int64(370))),
			[]string{"$0.0012075 +?", "$0.0075 +?", "$0.0024", "$0.0111075 +?"}},
		{"by model, request model when no response model", acme, GroupModel, []CostRow{
			{"claude-sonnet-4", totals(1, new("0.0075"), 0, new(int64(1000)), new(int64(300)))},
			{"gpt-4o-2024-08-06", totals(3, new("0.0036"), 1, new(int64(300)), new(int64(60)))},
			{"mistral-large-2411", totals(1, nil, 1, new(int64(50)), nil)},
		}, totals(5, new("0.0111"), 2, new(int64(1350)), new(int64(360))),
			[]string{"$0.0075", "$0.0036 +?", "—", "$0.0111 +?"}},
		{"by tenant", curatedRange, GroupTenant, []CostRow{
			{"acme", totals(5, new("0.0111"), 2, new(int64(1350)), new(int64(360)))},
			{"globex", totals(3, new("0.0000075"), 0, new(int64(25)), new(int64(10)))},
		}, totals(8, new("0.0111075"), 2, new(int64(1375)), new(int64(370))),
			[]string{"$0.0111 +?", "$0.0000075", "$0.0111075 +?"}},
		{"only unknown", acme.with(func(f *Filter) { f.Status = "error" }), GroupTenant, []CostRow{
			{"acme", totals(1, nil, 1, nil, nil)},
		}, totals(1, nil, 1, nil, nil), []string{"—", "—"}},
		{"known zero is not unknown", curatedRange.with(func(f *Filter) { f.Tenant, f.Status = "globex", "error" }), GroupModel, []CostRow{
			{"gpt-4o-mini-2024-07-18", totals(1, new("0"), 0, new(int64(10)), new(int64(0)))},
		}, totals(1, new("0"), 0, new(int64(10)), new(int64(0))), []string{"$0.00", "$0.00"}},
		{"no calls", acme.with(func(f *Filter) { f.Tenant = "globex" }), GroupDay, []CostRow{},
			totals(0, nil, 0, nil, nil), []string{"—"}},
	}
	for _, tc := range cases {
		r, err := Costs(ctx, store, tc.f, tc.group)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if r.Group != tc.group || len(r.Rows) != len(tc.rows) {
			t.Fatalf("%s: group %q, %d rows, want %d", tc.name, r.Group, len(r.Rows), len(tc.rows))
		}
		var shown []string
		for i, row := range r.Rows {
			if row.Key != tc.rows[i].Key || showTotals(row.CostTotals) != showTotals(tc.rows[i].CostTotals) {
				t.Errorf("%s: row %d: %s %s, want %s %s", tc.name, i, row.Key, showTotals(row.CostTotals), tc.rows[i].Key, showTotals(tc.rows[i].CostTotals))
			}
			shown = append(shown, FormatCost(row.CostUSD, row.CostUnknownCalls))
		}
		if showTotals(r.Total) != showTotals(tc.total) {
			t.Errorf("%s: total %s, want %s", tc.name, showTotals(r.Total), showTotals(tc.total))
		}
		shown = append(shown, FormatCost(r.Total.CostUSD, r.Total.CostUnknownCalls))
		if !slices.Equal(shown, tc.shown) {
			t.Errorf("%s: shown %q, want %q", tc.name, shown, tc.shown)
		}
	}
	if _, err := Costs(ctx, store, curatedRange, "week"); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown group: %v", err)
	}
	// Every tenant, ever: more groups than a report holds.
	if _, err := Costs(ctx, store, Filter{Tenants: every}, GroupTenant); !errors.Is(err, ErrInvalid) {
		t.Errorf("too many groups: %v", err)
	}
}

func TestTimeseries(t *testing.T) {
	load(t)
	ctx := context.Background()
	type pt struct {
		at                     string
		calls, errors, unknown uint64
		cost                   string
	}
	h := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	show := func(ps []Point) []pt {
		var out []pt
		for _, p := range ps {
			cost := "null"
			if p.CostUSD != nil {
				cost = *p.CostUSD
			}
			out = append(out, pt{h(p.T), p.Calls, p.Errors, p.CostUnknownCalls, cost})
		}
		return out
	}
	cases := []struct {
		name   string
		f      Filter
		bucket string
		want   []pt
	}{
		{"days", curatedRange, BucketDay, []pt{
			{h(t0), 4, 1, 1, "0.0012075"},
			{h(t0.Add(24 * time.Hour)), 2, 0, 1, "0.0075"}, // a3's status is unset: not an error
			{h(t0.Add(48 * time.Hour)), 2, 1, 0, "0.0024"},
		}},
		{"hours with empty ones", Filter{Tenants: every, From: t0.Add(30 * time.Minute), To: at(3, 0)}, BucketHour, []pt{
			{h(t0), 0, 0, 0, "null"},
			{h(at(1, 0)), 4, 1, 1, "0.0012075"},
			{h(at(2, 0)), 0, 0, 0, "null"},
		}},
		{"unbounded: from the first call's day to the last's", Filter{Tenants: every, Tenant: "acme"}, BucketDay, []pt{
			{h(t0), 2, 1, 1, "0.0012"},
			{h(t0.Add(24 * time.Hour)), 2, 0, 1, "0.0075"},
			{h(t0.Add(48 * time.Hour)), 1, 0, 0, "0.0024"},
		}},
		{"nothing granted, unbounded", Filter{Tenants: []string{}}, BucketDay, nil},
		{"nothing granted, bounded", Filter{Tenants: []string{}, From: t0, To: t0.Add(48 * time.Hour)}, BucketDay, []pt{
			{h(t0), 0, 0, 0, "null"}, {h(t0.Add(24 * time.Hour)), 0, 0, 0, "null"},
		}},
	}
	for _, tc := range cases {
		s, err := Timeseries(ctx, store, tc.f, tc.bucket)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := show(s.Points); s.Bucket != tc.bucket || !slices.Equal(got, tc.want) || s.Points == nil {
			t.Errorf("%s: got %s %+v, want %+v", tc.name, s.Bucket, got, tc.want)
		}
	}
	// An unbounded hourly series of acme runs from 01:00 on the first day
	// to 50:00, the hour of its last call.
	s, err := Timeseries(ctx, store, Filter{Tenants: every, Tenant: "acme"}, BucketHour)
	if err != nil || len(s.Points) != 50 || !s.Points[0].T.Equal(at(1, 0)) || !s.Points[49].T.Equal(at(50, 0)) {
		t.Fatalf("unbounded hours: %d points, %v", len(s.Points), err)
	}
	// Exactly MaxPoints buckets are allowed, one more is not.
	if s, err := Timeseries(ctx, store, Filter{Tenants: every, From: t0, To: t0.Add(MaxPoints * time.Hour)}, BucketHour); err != nil || len(s.Points) != MaxPoints {
		t.Errorf("%d buckets: %d points, %v", MaxPoints, len(s.Points), err)
	}
	for name, tc := range map[string]struct {
		f      Filter
		bucket string
	}{
		"one bucket too many": {Filter{From: t0, To: t0.Add(MaxPoints*time.Hour + time.Nanosecond)}, BucketHour},
		"bounded, many days":  {Filter{From: t0, To: t0.Add(3 * 365 * 24 * time.Hour)}, BucketHour},
		"data over months":    {Filter{Tenants: every, Tenant: "bulk"}, BucketHour},
		"unknown bucket":      {curatedRange, "week"},
		"bad filter":          {Filter{Status: "x"}, BucketDay},
	} {
		if _, err := Timeseries(ctx, store, tc.f, tc.bucket); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestLatency(t *testing.T) {
	load(t)
	ctx := context.Background()
	show := func(r LatencyReport) string {
		var b strings.Builder
		for _, bk := range r.Buckets {
			if bk.LeMS == nil {
				fmt.Fprintf(&b, "inf:%d ", bk.Count)
			} else {
				fmt.Fprintf(&b, "%d:%d ", *bk.LeMS, bk.Count)
			}
		}
		q := func(p *float64) string {
			if p == nil {
				return "null"
			}
			return fmt.Sprint(*p)
		}
		fmt.Fprintf(&b, "p50=%s p95=%s p99=%s calls=%d", q(r.P50MS), q(r.P95MS), q(r.P99MS), r.Calls)
		return b.String()
	}
	cases := map[string]struct {
		f    Filter
		want string
	}{
		// Durations 90 120 250 300 480 1000 2600 70000: bounds are
		// inclusive; quantiles are the values at positions 4, 7 and 7.
		"curated": {curatedRange, "100:1 250:2 500:2 1000:1 2500:0 5000:1 10000:0 30000:0 60000:0 inf:1 p50=480 p95=70000 p99=70000 calls=8"},
		"globex":  {curatedRange.with(func(f *Filter) { f.Tenants = []string{"globex"} }), "100:1 250:1 500:1 1000:0 2500:0 5000:0 10000:0 30000:0 60000:0 inf:0 p50=250 p95=300 p99=300 calls=3"},
		"none":    {curatedRange.with(func(f *Filter) { f.Tenants = []string{} }), "100:0 250:0 500:0 1000:0 2500:0 5000:0 10000:0 30000:0 60000:0 inf:0 p50=null p95=null p99=null calls=0"},
	}
	for name, tc := range cases {
		r, err := Latency(ctx, store, tc.f)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if got := show(r); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, tc.want)
		}
	}
	if _, err := Latency(ctx, store, Filter{Model: "\xff"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad filter: %v", err)
	}
}

func TestFacets(t *testing.T) {
	load(t)
	ctx := context.Background()
	got, err := Facets(ctx, store, Filter{Tenants: []string{"acme"}})
	if err != nil {
		t.Fatal(err)
	}
	want := FacetValues{
		Tenants:   []string{"acme"},
		Services:  []string{"chat-api", "summarizer"},
		Models:    []string{"claude-sonnet-4", "gpt-4o", "gpt-4o-2024-08-06", "mistral-large", "mistral-large-2411"},
		Providers: []string{"anthropic", "mistral", "openai"},
		Statuses:  []string{"error", "ok", "unset"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("acme:\n got %+v\nwant %+v", got, want)
	}
	// Every tenant: the first MaxFacetValues of the sorted names.
	all, err := Facets(ctx, store, Filter{Tenants: every})
	if err != nil {
		t.Fatal(err)
	}
	wantTenants := []string{"acme", "bulk", "bulk2", "globex", "recent"}
	for i := 0; len(wantTenants) < MaxFacetValues; i++ {
		wantTenants = append(wantTenants, fmt.Sprintf("zz-%05d", i))
	}
	if !slices.Equal(all.Tenants, wantTenants) || !slices.Equal(all.Services, []string{"batch", "bot", "chat-api", "summarizer"}) {
		t.Errorf("all: %d tenants %q…, services %q", len(all.Tenants), all.Tenants[:min(8, len(all.Tenants))], all.Services)
	}
	none, err := Facets(ctx, store, Filter{Tenants: []string{}})
	if err != nil || len(none.Tenants)+len(none.Services)+len(none.Models)+len(none.Providers)+len(none.Statuses) != 0 || none.Tenants == nil {
		t.Errorf("nothing granted: %+v, %v", none, err)
	}
	if _, err := Facets(ctx, store, Filter{Provider: strings.Repeat("p", 2000)}); !errors.Is(err, ErrInvalid) {
		t.Errorf("bad filter: %v", err)
	}
}

// TestTenantRestriction asks every view, as a person granted only acme,
// questions whose answers in globex exist, and finds none of globex.
func TestTenantRestriction(t *testing.T) {
	load(t)
	ctx := context.Background()
	acmeOnly := []string{"acme"}
	for _, f := range []Filter{{Tenants: acmeOnly}, {Tenants: acmeOnly, Tenant: "globex"}, curatedRange.with(func(f *Filter) { f.Tenants = acmeOnly })} {
		calls, _, err := ListCalls(ctx, store, f, MaxLimit, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range calls {
			if c.Tenant != "acme" {
				t.Errorf("ListCalls %+v: call of %s", f, c.Tenant)
			}
		}
		wantCalls := uint64(len(calls))
		costs, err := Costs(ctx, store, f, GroupTenant)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range costs.Rows {
			if r.Key != "acme" {
				t.Errorf("Costs %+v: row of %s", f, r.Key)
			}
		}
		if costs.Total.Calls != wantCalls {
			t.Errorf("Costs %+v: %d calls, the list has %d", f, costs.Total.Calls, wantCalls)
		}
		lat, err := Latency(ctx, store, f)
		if err != nil || lat.Calls != wantCalls {
			t.Errorf("Latency %+v: %d calls, want %d, %v", f, lat.Calls, wantCalls, err)
		}
		series, err := Timeseries(ctx, store, f, BucketDay)
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		for _, p := range series.Points {
			n += p.Calls
		}
		if n != wantCalls {
			t.Errorf("Timeseries %+v: %d calls, want %d", f, n, wantCalls)
		}
		facets, err := Facets(ctx, store, f)
		if err != nil {
			t.Fatal(err)
		}
		if len(facets.Tenants) > 1 || slices.Contains(facets.Services, "bot") || slices.Contains(facets.Models, "gpt-4o-mini") {
			t.Errorf("Facets %+v: %+v", f, facets)
		}
	}
	for _, q := range []string{traceD, traceE, "resp-shared", "chatcmpl-g1", "user-9", "user-1"} {
		_, results, err := Search(ctx, store, q, t0, t0.Add(72*time.Hour), acmeOnly, MaxLimit)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range results {
			if c.Tenant != "acme" {
				t.Errorf("Search %q: call of %s", q, c.Tenant)
			}
		}
	}
}

func TestCursorRoundTrip(t *testing.T) {
	for _, c := range []cursor{
		{StartTime: t0.Add(123456789), Tenant: "acme", TraceID: traceA, SpanID: "0000000000000a01"},
		{StartTime: minTime, Tenant: "", TraceID: "", SpanID: ""},
		{StartTime: maxTime, Tenant: "\xff\x00,\"'", TraceID: strings.Repeat("t", maxCursorField), SpanID: "s"},
	} {
		got, err := decodeCursor(c.encode())
		if err != nil || got != c {
			t.Errorf("%+v: got %+v, %v", c, got, err)
		}
	}
	token := cursor{StartTime: t0, Tenant: "acme"}.encode()
	for name, s := range map[string]string{
		"empty":            "",
		"padded base64":    token + "==",
		"other alphabet":   strings.NewReplacer("-", "+", "_", "/").Replace(cursor{StartTime: t0, Tenant: "\xfb\xff"}.encode()),
		"unknown version":  "Ag",
		"trailing bytes":   "AYAAAAAAqg",
		"length too large": "AQD_____D2FjbWU",
		"before 1900":      "Af___________wEAAAA",
	} {
		if _, err := decodeCursor(s); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", name, err)
		}
	}
}

func TestFormatCost(t *testing.T) {
	cases := []struct {
		cost    *string
		unknown uint64
		want    string
	}{
		{new("0.0123"), 0, "$0.0123"},
		{new("0.0123"), 3, "$0.0123 +?"},
		{nil, 2, "—"},
		{nil, 0, "—"},
		{new("0"), 0, "$0.00"},
		{new("0"), 1, "$0.00 +?"},
		{new("12.5"), 0, "$12.50"},
		{new("7"), 0, "$7.00"},
		{new("0.000000000001"), 0, "$0.000000000001"},
		{new("1234567890123456789012.100000000000"), 0, "$1234567890123456789012.10"},
		{new("-0.5"), 0, "-$0.50"},
		{new(""), 0, "—"},
		{new("1."), 0, "—"},
		{new(".5"), 0, "—"},
		{new("1e-3"), 0, "—"},
		{new("NaN"), 0, "—"},
	}
	for _, tc := range cases {
		if got := FormatCost(tc.cost, tc.unknown); got != tc.want {
			c := "nil"
			if tc.cost != nil {
				c = *tc.cost
			}
			t.Errorf("FormatCost(%s, %d) = %q, want %q", c, tc.unknown, got, tc.want)
		}
	}
}

// TestPreciseLookupIndexes: migration 0005 can run again without harm, and
// the search reads only the traces holding the response ID by primary key.
// (The end user's calls are read through a projection:
// TestEndUserProjectionFindsWhatTheTableFinds.)
func TestPreciseLookupIndexes(t *testing.T) {
	load(t)
	ctx := context.Background()
	ms, err := queries.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ms, func(m queries.Migration) bool { return m.Version == 5 })
	if i < 0 {
		t.Fatal("no migration 0005")
	}
	for i, stmt := range ms[i].Statements {
		if err := store.Engine().Exec(ctx, stmt.SQL); err != nil {
			t.Fatalf("statement %d again: %v", i+1, err)
		}
	}
	// The search resolves the response ID to its traces first (a subquery
	// over llm_calls, run while planning, so its own use of
	// idx_response_precise is not in this plan), then reads only those
	// traces' kept calls through the primary key, by tenant and trace.
	if plan := searchPlan(t, search{q: "chatcmpl-a1", userFrom: t0, userTo: t0.Add(72 * time.Hour)}); !strings.Contains(plan, "(tenant, trace_id) in 1-element set") {
		t.Errorf("the search for chatcmpl-a1 does not narrow the calls to its traces:\n%s", plan)
	}
}

// searchPlan is the engine's plan, with its index use, of views_search.sql
// for s over every tenant.
func searchPlan(t *testing.T, s search) string {
	t.Helper()
	sql, err := bind("views_search", Filter{Tenants: every}, searchParams(s, DefaultSearchLimit))
	if err != nil {
		t.Fatal(err)
	}
	query, settings, _ := strings.Cut(sql, "SETTINGS")
	var plan strings.Builder
	err = store.Engine().QueryJSON(context.Background(), "SELECT explain FROM (EXPLAIN indexes = 1 "+query+") SETTINGS"+settings, func(row []byte) error {
		plan.Write(row)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return plan.String()
}
