package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/docketlabs/docket/ledger/pricing/internal/schema"
)

//go:embed data/prices.json
var embeddedTable []byte

var defaultTable = sync.OnceValues(func() (*Table, error) {
	return Load(bytes.NewReader(embeddedTable))
})

// Default returns the table shipped with Docket (see PROVENANCE.md). It is
// parsed once and shared; a Table is safe for concurrent use.
func Default() (*Table, error) { return defaultTable() }

// MaxTableBytes bounds a table file; the shipped one is about 260 KB.
const MaxTableBytes = 8 << 20

// Table is an immutable price table with a bounded lookup cache.
type Table struct {
	source    Source
	providers []*provider
	byID      map[string]*provider
	cache     lookupCache
}

// Source describes where a table's prices come from.
type Source struct {
	Name, Repo, Commit, Path, Date, License, SHA256 string
}

// Source returns the table's provenance, for example to record which
// snapshot priced a call.
func (t *Table) Source() Source { return t.source }

type provider struct {
	id         string
	match      *matcher // provider name → provider, when the name is not the ID
	modelMatch *matcher // model name → provider, when no provider name is given
	fallbacks  []*provider
	models     []*model
}

type model struct {
	match    matcher
	periods  []period
	unpriced Price // what Lookup returns when the entry has no periods
}

type constraint uint8

const (
	always constraint = iota
	fromDate
	timeOfDay
)

type period struct {
	kind    constraint
	start   int64 // fromDate: Unix seconds of the start date, 00:00 UTC
	todFrom int64 // timeOfDay: seconds after midnight UTC, [todFrom, todTo)
	todTo   int64
	price   Price
}

// Price is the entry and period a call is priced with.
type Price struct {
	// Ref names the entry and period: "<source>:<provider>/<model>", plus
	// "@<start date>" or "@<daily window>" for a conditional period, e.g.
	// "genai-prices:openai/o3@2025-06-10". It is stable for a given table
	// entry and meant to be stored next to the cost.
	Ref      string
	Provider string // table provider ID
	Model    string // table model ID
	// StartDate (YYYY-MM-DD) is when this period's prices took effect, ""
	// for a period without a start date.
	StartDate string
	// TimeOfDay is the daily UTC window of this period ("00:30:00Z-16:30:00Z"),
	// "" if none.
	TimeOfDay string
	// PricesChecked is the date the source last checked the prices, if known.
	PricesChecked string
	Deprecated    bool
	// Rates apply while a call's input tokens do not exceed the first tier.
	Rates Rates
	// Tiers are ascending; shared with the table, so do not modify.
	Tiers []Tier
}

// Tier is a context-length price tier: when a call's input tokens exceed
// AboveInputTokens, Rates apply to all of its tokens (not only those above
// the threshold), the way Anthropic, Google and OpenAI bill long context.
type Tier struct {
	AboveInputTokens int64
	Rates            Rates
}

// RatesFor returns the rates for a call with the given input tokens.
func (p Price) RatesFor(inputTokens int64) Rates {
	r := p.Rates
	for _, t := range p.Tiers {
		if inputTokens > t.AboveInputTokens {
			r = t.Rates
		}
	}
	return r
}

// Load reads a price table in Docket's format (the shape of
// data/prices.json), e.g. a user-supplied override. The whole table is
// validated: unknown fields, malformed prices, bad rules and dangling
// fallbacks are errors.
func Load(r io.Reader) (*Table, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxTableBytes+1))
	if err != nil {
		return nil, fmt.Errorf("pricing: load table: %w", err)
	}
	if len(data) > MaxTableBytes {
		return nil, fmt.Errorf("pricing: load table: larger than %d bytes", MaxTableBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f schema.File
	if err = dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("pricing: load table: %w", err)
	}
	if _, err = dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("pricing: load table: data after the table")
	}
	t, err := build(f)
	if err != nil {
		return nil, fmt.Errorf("pricing: load table: %w", err)
	}
	return t, nil
}

func build(f schema.File) (*Table, error) {
	if f.Schema != schema.Version {
		return nil, fmt.Errorf("schema %d, want %d", f.Schema, schema.Version)
	}
	if err := checkID(f.Source.Name, ":/@"); err != nil {
		return nil, fmt.Errorf("source name: %w", err)
	}
	s := f.Source
	t := &Table{
		source: Source{Name: s.Name, Repo: s.Repo, Commit: s.Commit, Path: s.Path, Date: s.Date, License: s.License, SHA256: s.SHA256},
		byID:   make(map[string]*provider, len(f.Providers)),
	}
	for _, sp := range f.Providers {
		p, err := buildProvider(s.Name, sp)
		if err != nil {
			return nil, fmt.Errorf("provider %q: %w", sp.ID, err)
		}
		if t.byID[p.id] != nil {
			return nil, fmt.Errorf("provider %q listed twice", sp.ID)
		}
		t.byID[p.id] = p
		t.providers = append(t.providers, p)
	}
	for i, sp := range f.Providers {
		for _, id := range sp.Fallbacks {
			fb := t.byID[strings.ToLower(id)]
			if fb == nil {
				return nil, fmt.Errorf("provider %q: unknown fallback provider %q", sp.ID, id)
			}
			t.providers[i].fallbacks = append(t.providers[i].fallbacks, fb)
		}
	}
	return t, nil
}

func buildProvider(source string, sp schema.Provider) (*provider, error) {
	if err := checkID(sp.ID, "/@:"); err != nil {
		return nil, err
	}
	// Provider names are matched lower-cased, so IDs are stored that way.
	p := &provider{id: strings.ToLower(sp.ID)}
	var err error
	if p.match, err = optionalRule(sp.Match); err != nil {
		return nil, fmt.Errorf("match: %w", err)
	}
	if p.modelMatch, err = optionalRule(sp.ModelMatch); err != nil {
		return nil, fmt.Errorf("model_match: %w", err)
	}
	seen := make(map[string]bool, len(sp.Models))
	for _, sm := range sp.Models {
		if seen[sm.ID] {
			return nil, fmt.Errorf("model %q listed twice", sm.ID)
		}
		seen[sm.ID] = true
		m, err := buildModel(source, p.id, sm)
		if err != nil {
			return nil, fmt.Errorf("model %q: %w", sm.ID, err)
		}
		p.models = append(p.models, m)
	}
	return p, nil
}

func optionalRule(r *schema.Rule) (*matcher, error) {
	if r == nil {
		return nil, nil
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	m, err := compileRule(*r)
	return &m, err
}

func buildModel(source, providerID string, sm schema.Model) (*model, error) {
	if err := checkID(sm.ID, "@"); err != nil {
		return nil, err
	}
	if err := sm.Match.Validate(); err != nil {
		return nil, fmt.Errorf("match: %w", err)
	}
	mt, err := compileRule(sm.Match)
	if err != nil {
		return nil, fmt.Errorf("match: %w", err)
	}
	if sm.PricesChecked != "" {
		if _, err := time.Parse(time.DateOnly, sm.PricesChecked); err != nil {
			return nil, fmt.Errorf("prices_checked: %w", err)
		}
	}
	base := Price{
		Ref:           source + ":" + providerID + "/" + sm.ID,
		Provider:      providerID,
		Model:         sm.ID,
		PricesChecked: sm.PricesChecked,
		Deprecated:    sm.Deprecated,
	}
	m := &model{match: mt, unpriced: base}
	for i, sp := range sm.Periods {
		per, err := buildPeriod(base, sp)
		if err != nil {
			return nil, fmt.Errorf("period %d: %w", i, err)
		}
		m.periods = append(m.periods, per)
	}
	return m, nil
}

func buildPeriod(base Price, sp schema.Period) (period, error) {
	per := period{price: base}
	switch {
	case sp.StartDate != "" && sp.TimeOfDay != nil:
		return per, errors.New("a period has either a start_date or a time_of_day, not both")
	case sp.StartDate != "":
		d, err := time.Parse(time.DateOnly, sp.StartDate)
		if err != nil {
			return per, fmt.Errorf("start_date: %w", err)
		}
		per.kind, per.start = fromDate, d.Unix()
		per.price.StartDate = sp.StartDate
		per.price.Ref += "@" + sp.StartDate
	case sp.TimeOfDay != nil:
		from, err := secondOfDay(sp.TimeOfDay.Start)
		if err != nil {
			return per, fmt.Errorf("time_of_day start: %w", err)
		}
		to, err := secondOfDay(sp.TimeOfDay.End)
		if err != nil {
			return per, fmt.Errorf("time_of_day end: %w", err)
		}
		per.kind, per.todFrom, per.todTo = timeOfDay, from, to
		per.price.TimeOfDay = sp.TimeOfDay.Start + "-" + sp.TimeOfDay.End
		per.price.Ref += "@" + per.price.TimeOfDay
	}
	var err error
	if per.price.Rates, err = parseRates(sp.Prices); err != nil {
		return per, err
	}
	last := int64(-1)
	for _, st := range sp.Tiers {
		if st.AboveInputTokens <= last {
			return per, errors.New("tiers must be ascending by above_input_tokens, from 0")
		}
		last = st.AboveInputTokens
		r, err := parseRates(st.Prices)
		if err != nil {
			return per, fmt.Errorf("tier above %d: %w", st.AboveInputTokens, err)
		}
		per.price.Tiers = append(per.price.Tiers, Tier{AboveInputTokens: st.AboveInputTokens, Rates: r})
	}
	return per, nil
}

// secondOfDay parses "HH:MM:SS" with a "Z" or "±HH:MM" offset into seconds
// after midnight UTC (fractions of a second are ignored).
func secondOfDay(s string) (int64, error) {
	t, err := time.Parse("15:04:05Z07:00", s)
	if err != nil {
		return 0, err
	}
	_, off := t.Zone()
	sec := int64(t.Hour()*3600+t.Minute()*60+t.Second()-off) % 86400
	if sec < 0 {
		sec += 86400
	}
	return sec, nil
}

func parseRates(p schema.Prices) (Rates, error) {
	var r Rates
	for _, f := range []struct {
		name string
		in   string
		out  *Rate
	}{
		{"input", p.Input, &r.Input},
		{"output", p.Output, &r.Output},
		{"cache_read", p.CacheRead, &r.CacheRead},
		{"cache_write", p.CacheWrite, &r.CacheWrite},
		{"reasoning", p.Reasoning, &r.Reasoning},
		{"requests_kcount", p.Requests, &r.Request},
	} {
		if f.in == "" {
			continue
		}
		v, err := schema.ParseMicros(f.in)
		if err != nil {
			return r, fmt.Errorf("%s %q: %w", f.name, f.in, err)
		}
		*f.out = Rate{pico: v, known: true}
	}
	// requests_kcount is USD per 1000 requests: micro-USD per thousand is
	// pico-USD·10³ per request.
	if r.Request.known {
		if r.Request.pico > int64(MaxCost)/1000 {
			return r, fmt.Errorf("requests_kcount %q: too large", p.Requests)
		}
		r.Request.pico *= 1000
	}
	return r, nil
}

// checkID accepts a short identifier without spaces, control characters or
// the given separators, which would make price references ambiguous.
func checkID(id, forbidden string) error {
	if id == "" || len(id) > 200 {
		return fmt.Errorf("identifier %q: empty or longer than 200 bytes", id)
	}
	if strings.ContainsAny(id, forbidden) || strings.IndexFunc(id, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar
	}) >= 0 {
		return fmt.Errorf("identifier %q: contains a space, control character, invalid UTF-8 or one of %q", id, forbidden)
	}
	return nil
}
