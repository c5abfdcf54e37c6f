// Package completeness is the one place that says, per tenant, where LLM
// calls went between the application and the ledger: refused at the door
// (and why), taken in, flagged, written. The components of one collector
// record into the process's Account as spans pass them; the UI of the same
// process shows it beside what the ledger holds (ledgerstore.Store.CountByTenant)
// and the provider's own count (package reconcile), and the ledger
// exporter's metrics otelcol_exporter_ledger_completeness_spans (by tenant
// and stage) and …_completeness_requests_refused (by tenant and reason)
// export it.
//
// Reading the account: received − written is what the ledger exporter's
// queue still holds, or lost; refusals with a retry delay stay with their
// sender; calls the provider answered and no stage counted were lost before
// the collector (the application's SDK), which only reconciliation shows.
package completeness

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Stage is where the account counted a span.
type Stage string

// The stages, in the order spans pass them.
const (
	// DroppedInApp: spans the application's own OpenTelemetry SDK dropped
	// before export (a full queue), as the SDK reports them in its
	// self-observability metric otel.sdk.processor.span.processed with an
	// error.type. Counted when that metric arrives, under the tenant of
	// the metric's sender; an application that does not send it is not
	// counted here, and only reconciliation shows its losses.
	DroppedInApp Stage = "dropped_in_app"
	// RefusedAuth: spans of requests the tenant processor refused, for no
	// usable identity (counted under conventions.UnknownTenant) or for
	// naming another tenant. Lost unless the sender fixes its credentials.
	RefusedAuth Stage = "refused_auth"
	// RefusedRetry: spans refused with a retry delay because the ledger's
	// queue or its disk was full. The sender keeps and resends them.
	RefusedRetry Stage = "refused_retry"
	// RefusedInvalid: LLM call spans the ledger exporter refused because
	// no row could be made of them; the sender got the error.
	RefusedInvalid Stage = "refused_invalid"
	// Received: LLM call spans the ledger exporter took in and queued.
	Received Stage = "received"
	// Flagged: received call spans with a value the contract rejected
	// (stored as NULL, named in attribute_issues).
	Flagged Stage = "flagged"
	// Written: call rows the ledger accepted. A batch retried after a
	// failed write counts once, when it is written.
	Written Stage = "written"
)

// Stages lists every stage in order.
var Stages = []Stage{DroppedInApp, RefusedAuth, RefusedRetry, RefusedInvalid, Received, Flagged, Written}

// Refusal is why a request was refused before any of its spans was read.
// How many spans it carried is unknown, so refused requests are counted
// apart from the stages, as requests of any signal.
type Refusal string

// The refusals of a request at the door.
const (
	// RequestAuth: the receiver's authenticator found no tenant in the
	// sender's credentials. Counted under conventions.UnknownTenant.
	RequestAuth Refusal = "auth"
	// RequestMalformed: the body could not be decoded as OTLP within the
	// server's size limit. Counted under the sender's authenticated
	// tenant, or conventions.UnknownTenant when none is known.
	RequestMalformed Refusal = "malformed"
)

// Refusals lists every refusal.
var Refusals = []Refusal{RequestAuth, RequestMalformed}

// MaxTenants bounds the tenants one account keeps apart. Where senders name
// their tenant (the loopback dev shape), a sender inventing names would
// otherwise grow it without bound; the rest are counted under Overflow.
const MaxTenants = 1024

// Overflow is the tenant under which tenants beyond MaxTenants are counted.
const Overflow = "_other"

// MaxSeries bounds the running totals one account remembers (ReportTotal):
// one per sending process and SDK processor, so thousands are plenty.
const MaxSeries = 16384

// Account counts spans per tenant and stage.
type Account struct {
	since time.Time
	mu    sync.RWMutex
	byTen map[string]*counts
	// totals holds the last running total of each reporting series.
	totals struct {
		sync.Mutex
		last map[string]int64
	}
	reg struct {
		sync.Mutex
		n   int
		reg metric.Registration
	}
}

// counts holds a tenant's count of each stage and refusal, at its index
// in Stages and Refusals.
type counts struct {
	spans    [numStages]atomic.Int64
	requests [numRefusals]atomic.Int64
}

const (
	numStages   = 7
	numRefusals = 2
)

func init() {
	if len(Stages) != numStages || len(Refusals) != numRefusals {
		panic("completeness: numStages or numRefusals is out of date")
	}
}

// NewAccount returns an empty account.
func NewAccount() *Account {
	a := &Account{since: time.Now().UTC(), byTen: map[string]*counts{}}
	a.totals.last = map[string]int64{}
	return a
}

// Process is the account of this process, shared by its components.
var Process = NewAccount()

// Add counts n spans of tenant at stage.
func (a *Account) Add(tenant string, s Stage, n int64) {
	if n == 0 {
		return
	}
	i := slices.Index(Stages, s)
	if i < 0 {
		panic(fmt.Sprintf("completeness: unknown stage %q", s))
	}
	a.tenant(tenant).spans[i].Add(n)
}

// ReportTotal counts at stage s what a sender reported as a running total
// (a cumulative sum) of one series, keyed by series: its growth beyond the
// highest total reported before. A report sent again, or late, adds
// nothing; a sender that restarts starts a new series (the key includes
// its start time). It returns false, counting nothing, for a series beyond
// MaxSeries.
func (a *Account) ReportTotal(tenant string, s Stage, series string, total int64) bool {
	a.totals.Lock()
	last, known := a.totals.last[series]
	if !known && len(a.totals.last) >= MaxSeries {
		a.totals.Unlock()
		return false
	}
	a.totals.last[series] = max(last, total)
	a.totals.Unlock()
	a.Add(tenant, s, max(0, total-last))
	return true
}

// Refuse counts one request of tenant refused for r.
func (a *Account) Refuse(tenant string, r Refusal) {
	i := slices.Index(Refusals, r)
	if i < 0 {
		panic(fmt.Sprintf("completeness: unknown refusal %q", r))
	}
	a.tenant(tenant).requests[i].Add(1)
}

// AddAll counts the spans of several tenants at stage.
func (a *Account) AddAll(byTenant map[string]int64, s Stage) {
	for t, n := range byTenant {
		a.Add(t, s, n)
	}
}

func (a *Account) tenant(t string) *counts {
	a.mu.RLock()
	c := a.byTen[t]
	a.mu.RUnlock()
	if c != nil {
		return c
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if c = a.byTen[t]; c != nil {
		return c
	}
	if len(a.byTen) >= MaxTenants {
		t = Overflow
		if c = a.byTen[t]; c != nil {
			return c
		}
	}
	c = new(counts)
	a.byTen[t] = c
	return c
}

// Tenant is one tenant's counts.
type Tenant struct {
	Tenant string          `json:"tenant"`
	Counts map[Stage]int64 `json:"counts"`
	// RefusedRequests counts the requests refused before their spans
	// could be counted, by refusal.
	RefusedRequests map[Refusal]int64 `json:"refused_requests"`
	// Pending is received − written: still in the ledger exporter's queue,
	// or lost in it. Negative after a restart, when the queue writes what
	// an earlier process received.
	Pending int64 `json:"pending"`
}

// Snapshot is an account at one moment.
type Snapshot struct {
	// Since is when the account started counting (the process's start).
	Since   time.Time `json:"since"`
	Tenants []Tenant  `json:"tenants"`
}

// Snapshot returns the counts of the tenants for which keep says true (nil
// keeps all), ordered by tenant.
func (a *Account) Snapshot(keep func(tenant string) bool) Snapshot {
	a.mu.RLock()
	defer a.mu.RUnlock()
	s := Snapshot{Since: a.since, Tenants: []Tenant{}}
	for t, c := range a.byTen {
		if keep != nil && !keep(t) {
			continue
		}
		m := make(map[Stage]int64, len(Stages))
		for i, st := range Stages {
			m[st] = c.spans[i].Load()
		}
		r := make(map[Refusal]int64, len(Refusals))
		for i, rf := range Refusals {
			r[rf] = c.requests[i].Load()
		}
		s.Tenants = append(s.Tenants, Tenant{Tenant: t, Counts: m, RefusedRequests: r, Pending: m[Received] - m[Written]})
	}
	slices.SortFunc(s.Tenants, func(x, y Tenant) int {
		switch {
		case x.Tenant < y.Tenant:
			return -1
		case x.Tenant > y.Tenant:
			return 1
		}
		return 0
	})
	return s
}

// Register exports the account through spans and requests, instruments of
// meter (the ledger exporter's otelcol_exporter_ledger_completeness_spans
// and otelcol_exporter_ledger_completeness_requests_refused). Every
// component that records calls it at start and Unregister at shutdown;
// the first registers the callback, so a process exports the account once.
func (a *Account) Register(meter metric.Meter, spans, requests metric.Int64ObservableCounter) error {
	a.reg.Lock()
	defer a.reg.Unlock()
	if a.reg.n > 0 {
		a.reg.n++
		return nil
	}
	reg, err := meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for _, t := range a.Snapshot(nil).Tenants {
			for _, st := range Stages {
				o.ObserveInt64(spans, t.Counts[st], metric.WithAttributeSet(attribute.NewSet(
					attribute.String("tenant", t.Tenant), attribute.String("stage", string(st)))))
			}
			for _, rf := range Refusals {
				o.ObserveInt64(requests, t.RefusedRequests[rf], metric.WithAttributeSet(attribute.NewSet(
					attribute.String("tenant", t.Tenant), attribute.String("reason", string(rf)))))
			}
		}
		return nil
	}, spans, requests)
	if err != nil {
		return fmt.Errorf("completeness: register metric: %w", err)
	}
	a.reg.reg, a.reg.n = reg, 1
	return nil
}

// Unregister undoes one Register; the last one removes the metric.
func (a *Account) Unregister() error {
	a.reg.Lock()
	defer a.reg.Unlock()
	if a.reg.n == 0 {
		return nil
	}
	if a.reg.n--; a.reg.n > 0 {
		return nil
	}
	if err := a.reg.reg.Unregister(); err != nil {
		return fmt.Errorf("completeness: unregister metric: %w", err)
	}
	return nil
}
