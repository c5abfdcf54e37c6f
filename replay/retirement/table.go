package retirement

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/docketlabs/docket/replay/retirement/internal/schema"
)

//go:embed data/retirements.json
var shipped []byte

// Date is a calendar day. Vendors publish retirement dates as days without
// a time zone; Docket reads them as UTC days, so a model counts as retired
// from 00:00 UTC of its retirement date.
type Date struct{ t time.Time }

// ParseDate reads YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("retirement: %q is not a YYYY-MM-DD date", s)
	}
	return Date{t}, nil
}

// String is YYYY-MM-DD.
func (d Date) String() string { return d.t.Format(time.DateOnly) }

// Start is the first instant of the day, UTC.
func (d Date) Start() time.Time { return d.t }

// MarshalJSON writes "YYYY-MM-DD".
func (d Date) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// Precision says how firm a retirement date is.
type Precision string

// Precisions, as the source gives them.
const (
	// PrecisionExact: the vendor's announced shutdown date.
	PrecisionExact Precision = "exact"
	// PrecisionEarliest: the vendor's earliest possible shutdown date (Google
	// publishes its whole table this way); the model may run longer.
	PrecisionEarliest Precision = "earliest"
	// PrecisionTentative: the vendor called the date tentative.
	PrecisionTentative Precision = "tentative"
)

// Entry is what the table knows about one model snapshot (or, for OpenAI
// fine-tunes, one base-model family) on one platform.
type Entry struct {
	// Provider is the table's platform ID: anthropic, openai, google (the
	// Gemini API), google-vertex, aws-bedrock, azure-ai-foundry.
	Provider string `json:"provider"`
	// Model is the canonical vendor ID, also on partner platforms
	// (Bedrock rows say claude-3-7-sonnet-20250219, not the Bedrock model ID).
	Model string `json:"model"`
	// Aliases are other names that retire with this snapshot.
	Aliases []string `json:"aliases,omitempty"`
	// Announced is when the deprecation was announced; nil when the source
	// does not say (most Gemini API rows).
	Announced *Date `json:"announced"`
	// Retired is the shutdown date; nil when not given.
	Retired     *Date     `json:"retired"`
	Precision   Precision `json:"precision"`
	Replacement string    `json:"replacement,omitempty"`
	Source      Source    `json:"source"`
}

// Source says where an entry's dates come from.
type Source struct {
	URLs       []string `json:"urls"`
	VendorPage string   `json:"vendor_page,omitempty"` // the page the source transcribes
	AsOf       *Date    `json:"as_of"`                 // when the source read it; nil if unknown
}

// Table is a model-retirement table. It is safe for concurrent use.
type Table struct {
	prepared string
	entries  []Entry
	// byName maps provider → lower-case model name or alias → entry index.
	byName map[string]map[string]int
	// fineTunes lists, per provider, the entries for fine-tunes of a base
	// family ("ft-gpt-4"), longest family first.
	fineTunes map[string][]int
}

// Parse reads a table in the format of data/retirements.json.
func Parse(data []byte) (*Table, error) {
	var f schema.File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("retirement: parse table: %w", err)
	}
	if f.Schema != schema.Version {
		return nil, fmt.Errorf("retirement: table schema %d, want %d", f.Schema, schema.Version)
	}
	t := &Table{prepared: f.Source.Prepared, byName: map[string]map[string]int{}, fineTunes: map[string][]int{}}
	for i, se := range f.Entries {
		e, err := entryFrom(se)
		if err != nil {
			return nil, fmt.Errorf("retirement: entry %d: %w", i, err)
		}
		names := t.byName[e.Provider]
		if names == nil {
			names = map[string]int{}
			t.byName[e.Provider] = names
		}
		for _, n := range append([]string{e.Model}, e.Aliases...) {
			n = strings.ToLower(n)
			if _, dup := names[n]; dup {
				return nil, fmt.Errorf("retirement: entry %d: %s name %q is listed twice", i, e.Provider, n)
			}
			names[n] = i
		}
		if strings.HasPrefix(e.Model, fineTunePrefix) {
			t.fineTunes[e.Provider] = append(t.fineTunes[e.Provider], i)
		}
		t.entries = append(t.entries, e)
	}
	for _, idx := range t.fineTunes {
		sortLongestFirst(idx, t.entries)
	}
	return t, nil
}

func entryFrom(se schema.Entry) (Entry, error) {
	e := Entry{Provider: strings.ToLower(se.Provider), Model: se.Model, Aliases: se.Aliases,
		Precision: Precision(se.Precision), Replacement: se.Replacement,
		Source: Source{URLs: se.Sources, VendorPage: se.VendorPage}}
	if e.Provider == "" || e.Model == "" {
		return e, errors.New("provider and model are required")
	}
	switch e.Precision {
	case PrecisionExact, PrecisionEarliest, PrecisionTentative:
	default:
		return e, fmt.Errorf("unknown precision %q", se.Precision)
	}
	var err error
	if e.Announced, err = optionalDate(se.Announced); err != nil {
		return e, err
	}
	if e.Retired, err = optionalDate(se.Retired); err != nil {
		return e, err
	}
	if e.Source.AsOf, err = optionalDate(se.AsOf); err != nil {
		return e, err
	}
	if e.Announced == nil && e.Retired == nil {
		return e, errors.New("neither an announcement nor a retirement date")
	}
	return e, nil
}

func optionalDate(s string) (*Date, error) {
	if s == "" {
		return nil, nil
	}
	d, err := ParseDate(s)
	if err != nil {
		return nil, err
	}
	return &d, nil
}

var defaultTable = sync.OnceValues(func() (*Table, error) { return Parse(shipped) })

// Default returns the shipped table.
func Default() (*Table, error) { return defaultTable() }

// Prepared is the date the table's sources were compiled (YYYY-MM-DD): the
// table knows nothing announced after it.
func (t *Table) Prepared() string { return t.prepared }

// Len is the number of entries.
func (t *Table) Len() int { return len(t.entries) }

// State is where a model is in its lifecycle at a given time.
type State string

// States.
const (
	// Active: listed in the table, but its deprecation was announced after
	// the time asked about.
	Active State = "active"
	// Announced: deprecated, not yet retired.
	Announced State = "announced"
	// Retired: the retirement date has been reached; do not call it.
	Retired State = "retired"
	// Unknown: not in the table. The table lists only models with an
	// announced retirement, so this usually means "no retirement known", but
	// it is not a promise that the model is still served.
	Unknown State = "unknown"
)

// Status is a model's state at a time, with the entry it comes from
// (zero when Unknown).
type Status struct {
	State State
	Entry Entry
}

// String says the state in words for reports: "retired on 2026-06-15",
// "announced, retires on 2027-01-22 (tentative)".
func (s Status) String() string {
	e := s.Entry
	qualifier := ""
	switch e.Precision {
	case PrecisionEarliest:
		qualifier = " (earliest possible date)"
	case PrecisionTentative:
		qualifier = " (tentative)"
	}
	switch s.State {
	case Retired:
		return "retired on " + e.Retired.String() + qualifier
	case Announced:
		if e.Retired == nil {
			return "announced, retirement date not given"
		}
		return "announced, retires on " + e.Retired.String() + qualifier
	case Active:
		return "active"
	}
	return "unknown"
}

// Status returns the lifecycle state of a model at now. An earliest-possible
// date counts as reached once it has passed: the model may still answer,
// but nothing guarantees it, so it is not called.
func (t *Table) Status(provider, model string, now time.Time) Status {
	e, ok := t.Lookup(provider, model)
	if !ok {
		return Status{State: Unknown}
	}
	switch {
	case e.Retired != nil && !now.Before(e.Retired.Start()):
		return Status{State: Retired, Entry: e}
	case e.Announced == nil || !now.Before(e.Announced.Start()):
		return Status{State: Announced, Entry: e}
	}
	return Status{State: Active, Entry: e}
}
