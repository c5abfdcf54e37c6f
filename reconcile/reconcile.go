// Package reconcile compares the ledger with the providers' own usage
// reports (package ledger/usage): per UTC day, provider and model — and per
// API key where a mapping from services to keys is given — requests and
// input, output and cached tokens on both sides, their drift in percent,
// and a state per cell. A call missing from the ledger shows up here even
// when nothing else noticed its loss.
package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/ledger/usage"
	"github.com/docketlabs/docket/queries"
)

// States of a cell.
const (
	// StateOK: requests (or, where the provider counts no requests,
	// tokens) and every comparable token count agree within the tolerance.
	StateOK = "within_tolerance"
	// StateLedgerMissing: the provider answered more than the ledger holds.
	StateLedgerMissing = "ledger_missing_calls"
	// StateLedgerExtra: the ledger holds calls the provider did not report.
	StateLedgerExtra = "ledger_extra_calls"
	// StateTokensDiffer: the calls agree, their token counts do not.
	StateTokensDiffer = "tokens_differ"
	// StateNotImported: no provider report covers the day.
	StateNotImported = "not_imported"
	// StateUndetermined: the provider counts no requests and some ledger
	// calls have no usage, so neither side can be compared.
	StateUndetermined = "undetermined"
)

// States lists every state, in the order the UI shows them.
var States = []string{StateLedgerMissing, StateLedgerExtra, StateTokensDiffer, StateUndetermined, StateNotImported, StateOK}

// DefaultTolerancePercent is the drift accepted as agreement: the
// reference design's "provider's usage count within 0.5%".
const DefaultTolerancePercent = 0.5

// MaxDays bounds one reconciliation.
const MaxDays = 400

// ErrInvalid marks a bad request (range, tolerance); the API answers 400.
var ErrInvalid = errors.New("invalid reconciliation request")

// Options selects what to reconcile.
type Options struct {
	// From and To are UTC days [From, To); times are truncated to days.
	From, To time.Time
	// Provider narrows to one provider; "" is every provider with reports.
	Provider string
	// TolerancePercent is the accepted drift; 0 means the default.
	TolerancePercent float64
	// Keys maps, per provider, service names to the API key ID they call
	// that provider with (as the provider's report names it). When set,
	// cells are per key too; a service not listed is reconciled under
	// key "".
	Keys map[string]map[string]string
}

// Side is one side's counts. Nil is unknown: the ledger had no usage on
// any call, or the provider does not count requests.
type Side struct {
	Requests        *int64 `json:"requests"`
	InputTokens     *int64 `json:"input_tokens"`
	OutputTokens    *int64 `json:"output_tokens"`
	CacheReadTokens *int64 `json:"cache_read_tokens"`
}

// Drift is (ledger − provider) / provider in percent per count; nil when
// either side is unknown, or the provider reported 0 and the ledger did not.
type Drift struct {
	Requests        *float64 `json:"requests"`
	InputTokens     *float64 `json:"input_tokens"`
	OutputTokens    *float64 `json:"output_tokens"`
	CacheReadTokens *float64 `json:"cache_read_tokens"`
}

// Cell is one day, provider, model (and key) with both sides.
type Cell struct {
	Day      string `json:"day"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	APIKeyID string `json:"api_key_id,omitempty"`
	// Projects are the OpenAI projects or Anthropic workspaces the
	// provider's rows name; Services the ledger services in the cell.
	Projects []string `json:"projects"`
	Services []string `json:"services"`
	Ledger   Side     `json:"ledger"`
	// LedgerErrors are calls that ended in an error, not compared.
	LedgerErrors int64 `json:"ledger_errors"`
	// LedgerUsageUnknown and LedgerCacheUnknown count answered calls
	// without usage or cache reads: their token sums are partial ("+?").
	LedgerUsageUnknown int64 `json:"ledger_usage_unknown"`
	LedgerCacheUnknown int64 `json:"ledger_cache_unknown"`
	// Reported is nil when no report covers the day.
	Reported *Side  `json:"reported"`
	Drift    Drift  `json:"drift_percent"`
	State    string `json:"state"`
}

// Report is a reconciliation.
type Report struct {
	From             string         `json:"from"`
	To               string         `json:"to"`
	TolerancePercent float64        `json:"tolerance_percent"`
	ByKey            bool           `json:"by_key"`
	Cells            []Cell         `json:"cells"`
	States           map[string]int `json:"states"`
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("reconcile: %w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// Validate checks o and returns it with days truncated and defaults set.
func (o Options) Validate() (Options, error) {
	o.From, o.To = o.From.UTC().Truncate(24*time.Hour), o.To.UTC().Truncate(24*time.Hour)
	if o.From.Year() < 1970 || o.To.Year() > 2200 {
		return o, invalid("the range must lie within the years 1970–2200")
	}
	if !o.From.Before(o.To) {
		return o, invalid("from must be a day before to")
	}
	if o.To.Sub(o.From) > MaxDays*24*time.Hour {
		return o, invalid("more than %d days; narrow the range", MaxDays)
	}
	if o.TolerancePercent == 0 {
		o.TolerancePercent = DefaultTolerancePercent
	}
	if math.IsNaN(o.TolerancePercent) || o.TolerancePercent < 0 || o.TolerancePercent > 100 {
		return o, invalid("tolerance must be a percentage between 0 and 100")
	}
	if o.Provider != "" {
		if err := usage.CheckProvider(o.Provider); err != nil {
			return o, invalid("unknown provider")
		}
	}
	return o, nil
}

type ledgerRow struct {
	Day             string `json:"day"`
	Provider        string `json:"provider"`
	Model           string `json:"model"`
	Service         string `json:"service"`
	Requests        int64  `json:"requests"`
	Errors          int64  `json:"errors"`
	InputTokens     *int64 `json:"input_tokens"`
	OutputTokens    *int64 `json:"output_tokens"`
	CacheReadTokens *int64 `json:"cache_read_tokens"`
	UsageUnknown    int64  `json:"usage_unknown"`
	CacheUnknown    int64  `json:"cache_unknown"`
}

type providerRow struct {
	Day             string `json:"day"`
	Provider        string `json:"provider"`
	Model           string `json:"model"`
	ProjectID       string `json:"project_id"`
	APIKeyID        string `json:"api_key_id"`
	Rows            int64  `json:"rows"`
	Requests        *int64 `json:"requests"`
	InputTokens     int64  `json:"input_tokens"`
	OutputTokens    int64  `json:"output_tokens"`
	CacheReadTokens int64  `json:"cache_read_tokens"`
}

// Reconcile compares the ledger with the latest imported provider reports.
func Reconcile(ctx context.Context, st *ledgerstore.Store, o Options) (Report, error) {
	o, err := o.Validate()
	if err != nil {
		return Report{}, err
	}
	providers := []string{usage.ProviderOpenAI, usage.ProviderAnthropic}
	if o.Provider != "" {
		providers = []string{o.Provider}
	}
	list, _ := json.Marshal(providers)
	params := map[string]any{"from": o.From, "to": o.To, "providers": string(list)}
	led, err := storage.QueryRows[ledgerRow](ctx, st.Engine(), queries.MustGet("reconcile_ledger"), params)
	if err != nil {
		return Report{}, fmt.Errorf("reconcile: ledger side: %w", err)
	}
	rep, err := storage.QueryRows[providerRow](ctx, st.Engine(), queries.MustGet("reconcile_provider"), params)
	if err != nil {
		return Report{}, fmt.Errorf("reconcile: provider side: %w", err)
	}
	return build(o, led, rep), nil
}

type cellKey struct{ day, provider, model, key string }

// build joins both sides into cells and judges each.
func build(o Options, led []ledgerRow, rep []providerRow) Report {
	byKey := len(o.Keys) > 0
	cells := map[cellKey]*Cell{}
	get := func(k cellKey) *Cell {
		c := cells[k]
		if c == nil {
			c = &Cell{Day: k.day, Provider: k.provider, Model: k.model, APIKeyID: k.key, Projects: []string{}, Services: []string{}}
			cells[k] = c
		}
		return c
	}
	for _, r := range led {
		k := cellKey{r.Day, r.Provider, r.Model, ""}
		if byKey {
			k.key = o.Keys[r.Provider][r.Service]
		}
		c := get(k)
		c.Services = appendOnce(c.Services, r.Service)
		c.Ledger.Requests = usage.AddKnown(c.Ledger.Requests, &r.Requests)
		c.Ledger.InputTokens = usage.AddKnown(c.Ledger.InputTokens, r.InputTokens)
		c.Ledger.OutputTokens = usage.AddKnown(c.Ledger.OutputTokens, r.OutputTokens)
		c.Ledger.CacheReadTokens = usage.AddKnown(c.Ledger.CacheReadTokens, r.CacheReadTokens)
		c.LedgerErrors += r.Errors
		c.LedgerUsageUnknown += r.UsageUnknown
		c.LedgerCacheUnknown += r.CacheUnknown
	}
	covered := map[[2]string]bool{}
	for _, r := range rep {
		covered[[2]string{r.Provider, r.Day}] = true
		if r.Rows == 0 {
			continue
		}
		k := cellKey{r.Day, r.Provider, r.Model, ""}
		if byKey {
			k.key = r.APIKeyID
		}
		c := get(k)
		if r.ProjectID != "" {
			c.Projects = appendOnce(c.Projects, r.ProjectID)
		}
		if c.Reported == nil {
			c.Reported = &Side{}
		}
		c.Reported.Requests = usage.AddKnown(c.Reported.Requests, r.Requests)
		c.Reported.InputTokens = usage.AddKnown(c.Reported.InputTokens, &r.InputTokens)
		c.Reported.OutputTokens = usage.AddKnown(c.Reported.OutputTokens, &r.OutputTokens)
		c.Reported.CacheReadTokens = usage.AddKnown(c.Reported.CacheReadTokens, &r.CacheReadTokens)
	}
	out := Report{From: o.From.Format(time.DateOnly), To: o.To.Format(time.DateOnly), TolerancePercent: o.TolerancePercent,
		ByKey: byKey, Cells: make([]Cell, 0, len(cells)), States: map[string]int{}}
	for _, s := range States {
		out.States[s] = 0
	}
	for _, c := range cells {
		if c.Reported == nil && covered[[2]string{c.Provider, c.Day}] {
			// The report covered the day and had nothing for this cell.
			zero := int64(0)
			c.Reported = &Side{InputTokens: &zero, OutputTokens: &zero, CacheReadTokens: &zero}
			if usage.ReportsRequests(c.Provider) {
				c.Reported.Requests = &zero
			}
		}
		if c.Ledger.Requests == nil {
			zero := int64(0)
			c.Ledger = Side{Requests: &zero, InputTokens: &zero, OutputTokens: &zero, CacheReadTokens: &zero}
		}
		judge(c, o.TolerancePercent)
		out.States[c.State]++
		out.Cells = append(out.Cells, *c)
	}
	sort.Slice(out.Cells, func(i, j int) bool {
		a, b := out.Cells[i], out.Cells[j]
		return strings.Join([]string{a.Day, a.Provider, a.Model, a.APIKeyID}, "\x00") < strings.Join([]string{b.Day, b.Provider, b.Model, b.APIKeyID}, "\x00")
	})
	return out
}

// judge sets the cell's drift and state.
func judge(c *Cell, tol float64) {
	if c.Reported == nil {
		c.State = StateNotImported
		return
	}
	l, p := c.Ledger, *c.Reported
	tokensKnown := c.LedgerUsageUnknown == 0
	cacheKnown := c.LedgerCacheUnknown == 0
	c.Drift = Drift{Requests: drift(l.Requests, p.Requests)}
	if tokensKnown {
		c.Drift.InputTokens, c.Drift.OutputTokens = drift(l.InputTokens, p.InputTokens), drift(l.OutputTokens, p.OutputTokens)
	}
	if cacheKnown {
		c.Drift.CacheReadTokens = drift(l.CacheReadTokens, p.CacheReadTokens)
	}
	// Calls first: requests where the provider counts them, else all tokens.
	var lc, pc int64
	switch {
	case p.Requests != nil:
		lc, pc = *l.Requests, *p.Requests
	case tokensKnown:
		lc, pc = val(l.InputTokens)+val(l.OutputTokens), val(p.InputTokens)+val(p.OutputTokens)
	default:
		c.State = StateUndetermined
		return
	}
	switch {
	case within(lc, pc, tol):
	case lc < pc:
		c.State = StateLedgerMissing
		return
	default:
		c.State = StateLedgerExtra
		return
	}
	if tokensKnown && (!within(val(l.InputTokens), val(p.InputTokens), tol) || !within(val(l.OutputTokens), val(p.OutputTokens), tol)) ||
		cacheKnown && !within(val(l.CacheReadTokens), val(p.CacheReadTokens), tol) {
		c.State = StateTokensDiffer
		return
	}
	c.State = StateOK
}

// within reports |l − p| ≤ tol% of p, compared in integers scaled by 100
// so 995 of 1,000 is exactly 0.5% and not a rounding error beyond it.
func within(l, p int64, tol float64) bool {
	diff := l - p
	if diff < 0 {
		diff = -diff
	}
	return float64(diff)*100 <= tol*float64(p)*(1+1e-12)
}

func drift(l, p *int64) *float64 {
	if l == nil || p == nil {
		return nil
	}
	if *p == 0 {
		if *l == 0 {
			zero := 0.0
			return &zero
		}
		return nil
	}
	d := float64(*l-*p) / float64(*p) * 100
	return &d
}

func val(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func appendOnce(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}
