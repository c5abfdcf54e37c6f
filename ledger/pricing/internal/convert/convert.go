package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/docketlabs/docket/ledger/pricing/internal/schema"
)

// Source keys kept, and the field of schema.Prices each fills.
var keptKeys = map[string]func(*schema.Prices) *string{
	"input_mtok":            func(p *schema.Prices) *string { return &p.Input },
	"output_mtok":           func(p *schema.Prices) *string { return &p.Output },
	"cache_read_mtok":       func(p *schema.Prices) *string { return &p.CacheRead },
	"cache_write_mtok":      func(p *schema.Prices) *string { return &p.CacheWrite },
	"output_reasoning_mtok": func(p *schema.Prices) *string { return &p.Reasoning },
	"requests_kcount":       func(p *schema.Prices) *string { return &p.Requests },
}

// Source keys dropped on purpose: the OpenTelemetry GenAI usage attributes
// carry no count they could apply to. Any other key is an error, so a new
// unit in the source cannot vanish silently.
var droppedKeys = map[string]bool{
	"cache_write_1h_mtok":   true,
	"web_searches_kcount":   true,
	"input_audio_mtok":      true,
	"output_audio_mtok":     true,
	"cache_audio_read_mtok": true,
	"input_image_mtok":      true,
	"output_image_mtok":     true,
	"cache_image_read_mtok": true,
	"input_video_mtok":      true,
	"output_video_mtok":     true,
	"output_citation_mtok":  true,
}

type srcProvider struct {
	ID            string       `json:"id"`
	ProviderMatch *schema.Rule `json:"provider_match"`
	ModelMatch    *schema.Rule `json:"model_match"`
	Fallbacks     []string     `json:"fallback_model_providers"`
	Models        []srcModel   `json:"models"`
}

type srcModel struct {
	ID          string          `json:"id"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Match       schema.Rule     `json:"match"`
	Deprecated  bool            `json:"deprecated"`
	Prices      json.RawMessage `json:"prices"`
}

type srcConditional struct {
	Constraint *struct {
		StartDate string `json:"start_date"`
		StartTime string `json:"start_time"`
		EndTime   string `json:"end_time"`
	} `json:"constraint"`
	Prices map[string]json.RawMessage `json:"prices"`
}

type srcTiered struct {
	Base  json.Number `json:"base"`
	Tiers []struct {
		Start int64       `json:"start"`
		Price json.Number `json:"price"`
	} `json:"tiers"`
}

// report counts what the conversion changed or left out, for the log and
// PROVENANCE.md.
type report struct {
	Providers, Models, Periods int
	Dropped                    map[string]int // source key → price sets that had it
	Rounded                    []string       // "provider/model key: from → to"
	Free                       []string       // empty price sets read as free
	Unpriced                   []string       // empty price sets kept without a price
	Checked                    int            // models with a prices_checked date
}

// checkedDates maps provider ID → model ID → prices_checked date.
type checkedDates map[string]map[string]string

func convert(data []byte, checked checkedDates, src schema.Source) (schema.File, report, error) {
	rep := report{Dropped: map[string]int{}}
	// Descriptive fields (names, URLs, usage extractors) are ignored, so the
	// top level is decoded leniently; prices and constraints are strict.
	var providers []srcProvider
	if err := decode(data, &providers, false); err != nil {
		return schema.File{}, rep, fmt.Errorf("decode source: %w", err)
	}
	out := schema.File{Schema: schema.Version, Source: src}
	for _, sp := range providers {
		p := schema.Provider{ID: sp.ID, Match: sp.ProviderMatch, ModelMatch: sp.ModelMatch, Fallbacks: sp.Fallbacks}
		for _, r := range []*schema.Rule{p.Match, p.ModelMatch} {
			if r == nil {
				continue
			}
			if err := r.Validate(); err != nil {
				return schema.File{}, rep, fmt.Errorf("provider %s: %w", sp.ID, err)
			}
		}
		for _, sm := range sp.Models {
			m, err := convertModel(sp.ID, sm, &rep)
			if err != nil {
				return schema.File{}, rep, fmt.Errorf("provider %s model %s: %w", sp.ID, sm.ID, err)
			}
			if d := checked[sp.ID][sm.ID]; d != "" {
				m.PricesChecked = d
				rep.Checked++
			}
			rep.Periods += len(m.Periods)
			p.Models = append(p.Models, m)
		}
		rep.Providers++
		rep.Models += len(p.Models)
		out.Providers = append(out.Providers, p)
	}
	return out, rep, nil
}

func convertModel(providerID string, sm srcModel, rep *report) (schema.Model, error) {
	m := schema.Model{ID: sm.ID, Match: sm.Match, Deprecated: sm.Deprecated}
	if err := m.Match.Validate(); err != nil {
		return m, err
	}
	var conds []srcConditional
	if trimmed := bytes.TrimSpace(sm.Prices); len(trimmed) > 0 && trimmed[0] == '[' {
		if err := decodeStrict(sm.Prices, &conds); err != nil {
			return m, fmt.Errorf("prices: %w", err)
		}
	} else {
		var flat map[string]json.RawMessage
		if err := decodeStrict(sm.Prices, &flat); err != nil {
			return m, fmt.Errorf("prices: %w", err)
		}
		conds = []srcConditional{{Prices: flat}}
	}
	ref := providerID + "/" + sm.ID
	if len(conds) == 1 && conds[0].Constraint == nil && len(conds[0].Prices) == 0 {
		// The source writes free models and models it has no token price for
		// the same way, as an empty price set; only the first may cost $0.
		if markedFree(sm) {
			rep.Free = append(rep.Free, ref)
			m.Periods = []schema.Period{{Prices: schema.Prices{Input: "0", Output: "0"}}}
		} else {
			rep.Unpriced = append(rep.Unpriced, ref)
			m.Periods = []schema.Period{}
		}
		return m, nil
	}
	for _, c := range conds {
		per, err := convertPeriod(ref, c, rep)
		if err != nil {
			return m, err
		}
		m.Periods = append(m.Periods, per)
	}
	return m, nil
}

// markedFree reports whether the source says, in the ID, name or
// description, that an entry with no prices is free of charge.
func markedFree(sm srcModel) bool {
	return strings.HasSuffix(sm.ID, ":free") ||
		strings.Contains(strings.ToLower(sm.Name), "(free)") ||
		strings.Contains(strings.ToLower(sm.Description), "free of charge")
}

func convertPeriod(ref string, c srcConditional, rep *report) (schema.Period, error) {
	var per schema.Period
	if k := c.Constraint; k != nil {
		switch {
		case k.StartDate != "" && k.StartTime == "" && k.EndTime == "":
			per.StartDate = k.StartDate
		case k.StartDate == "" && k.StartTime != "" && k.EndTime != "":
			per.TimeOfDay = &schema.TimeWindow{Start: k.StartTime, End: k.EndTime}
		default:
			return per, errors.New("constraint must be a start_date or a start_time/end_time pair")
		}
	}
	// Per kept field: its base price and its tiers.
	type tier struct {
		start int64
		price string
	}
	bases := map[string]string{}
	tiers := map[string][]tier{}
	for _, key := range slices.Sorted(maps.Keys(c.Prices)) {
		raw := c.Prices[key]
		if droppedKeys[key] {
			rep.Dropped[key]++
			continue
		}
		if keptKeys[key] == nil {
			return per, fmt.Errorf("unknown price key %q: decide whether to keep or drop it", key)
		}
		var num json.Number
		if err := decodeStrict(raw, &num); err == nil {
			v, err := micros(ref, key, num, rep)
			if err != nil {
				return per, err
			}
			bases[key] = v
			continue
		}
		var t srcTiered
		if err := decodeStrict(raw, &t); err != nil {
			return per, fmt.Errorf("%s: neither a number nor tiered prices: %w", key, err)
		}
		if key == "requests_kcount" {
			return per, errors.New("requests_kcount cannot be tiered")
		}
		v, err := micros(ref, key, t.Base, rep)
		if err != nil {
			return per, err
		}
		bases[key] = v
		last := int64(-1)
		for _, st := range t.Tiers {
			if st.Start <= last {
				return per, fmt.Errorf("%s: tiers not ascending", key)
			}
			last = st.Start
			tv, err := micros(ref, key, st.Price, rep)
			if err != nil {
				return per, err
			}
			tiers[key] = append(tiers[key], tier{st.Start, tv})
		}
	}
	for key, v := range bases {
		*keptKeys[key](&per.Prices) = v
	}
	// A tier in the source belongs to one price field; Docket's tiers hold a
	// full price set. Under the source's rule (every field's tier is chosen
	// by the call's total input tokens) the two are equivalent: above each
	// threshold, a field takes its last tier at or below that threshold.
	var starts []int64
	for _, ts := range tiers {
		for _, t := range ts {
			starts = append(starts, t.start)
		}
	}
	slices.Sort(starts)
	for _, s := range slices.Compact(starts) {
		tr := schema.Tier{AboveInputTokens: s}
		for key, v := range bases {
			for _, t := range tiers[key] {
				if t.start <= s {
					v = t.price
				}
			}
			*keptKeys[key](&tr.Prices) = v
		}
		per.Tiers = append(per.Tiers, tr)
	}
	return per, nil
}

// micros turns a source number into a canonical decimal with at most
// schema.MicrosDigits fractional digits. Values with more digits (binary
// float artefacts such as 0.18000000000000002, or thirds) are rounded half
// to even and listed in the report.
func micros(ref, key string, n json.Number, rep *report) (string, error) {
	r, ok := new(big.Rat).SetString(n.String())
	if !ok {
		return "", fmt.Errorf("%s: %q is not a number", key, n)
	}
	if r.Sign() < 0 {
		return "", fmt.Errorf("%s: negative price %s", key, n)
	}
	scaled := new(big.Rat).Mul(r, big.NewRat(1_000_000, 1))
	q, rem := new(big.Int).QuoRem(scaled.Num(), scaled.Denom(), new(big.Int))
	if rem.Sign() != 0 {
		twice := new(big.Int).Mul(rem, big.NewInt(2))
		if c := twice.Cmp(scaled.Denom()); c > 0 || (c == 0 && q.Bit(0) == 1) {
			q.Add(q, big.NewInt(1))
		}
	}
	if !q.IsInt64() {
		return "", fmt.Errorf("%s: price %s out of range", key, n)
	}
	s := schema.FormatMicros(q.Int64())
	if rem.Sign() != 0 {
		rep.Rounded = append(rep.Rounded, fmt.Sprintf("%s %s: %s → %s", ref, key, n, s))
	}
	if _, err := schema.ParseMicros(s); err != nil {
		return "", fmt.Errorf("%s: price %s: %w", key, n, err)
	}
	return s, nil
}

func decodeStrict(data []byte, v any) error { return decode(data, v, true) }

func decode(data []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}
