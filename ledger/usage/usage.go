// Package usage holds the providers' own usage reports: OpenAI's
// organization Usage API (completions and embeddings), Anthropic's Admin
// usage report (messages) and their CSV exports, parsed into one row shape
// per day bucket and group, and stored with the provenance of the import in
// provider_usage / usage_imports. Reconciliation (package reconcile)
// compares them with the ledger.
//
// Token counts follow the GenAI conventions whatever the provider's wire
// said: InputTokens includes the tokens read from and written to the prompt
// cache (Anthropic's uncached_input_tokens does not).
package usage

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Providers, as the ledger's provider column names them.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// Endpoints a row's usage was reported for.
const (
	EndpointCompletions = "completions"
	EndpointEmbeddings  = "embeddings"
	EndpointMessages    = "messages"
)

// Sources of an import.
const (
	SourceAPI  = "api"
	SourceFile = "file"
)

// ErrInvalid marks a report that cannot be imported (malformed, not daily,
// out of bounds). Messages name the field and position, never a secret.
var ErrInvalid = errors.New("invalid usage report")

// Bounds on one import, so a hostile or broken report cannot exhaust memory.
const (
	MaxRows     = 1_000_000
	maxFieldLen = 512
	// maxCount bounds every count: beyond any real day of one organization,
	// and far inside Int64 even when summed over MaxRows rows.
	maxCount = int64(1) << 40
)

// Row is one group of one day of a provider's report.
type Row struct {
	Provider  string `json:"provider"`
	Day       string `json:"day"` // YYYY-MM-DD, UTC
	Endpoint  string `json:"endpoint"`
	Model     string `json:"model"`
	ProjectID string `json:"project_id"` // OpenAI project, Anthropic workspace; "" when not grouped
	APIKeyID  string `json:"api_key_id"` // "" when not grouped
	// Requests is nil when the report does not count requests (Anthropic's
	// usage report counts tokens only): unknown, not zero.
	Requests        *int64 `json:"requests"`
	InputTokens     int64  `json:"input_tokens"`
	OutputTokens    int64  `json:"output_tokens"`
	CacheReadTokens int64  `json:"cache_read_tokens"`
	// CacheWriteTokens is nil where the report does not split them out.
	CacheWriteTokens *int64 `json:"cache_write_tokens"`
}

func (r Row) key() string {
	return strings.Join([]string{r.Provider, r.Day, r.Endpoint, r.Model, r.ProjectID, r.APIKeyID}, "\x00")
}

// Import is the provenance of one import.
type Import struct {
	ID       string    `json:"import_id"`
	At       time.Time `json:"imported_at"`
	Actor    string    `json:"actor"`
	Source   string    `json:"source"` // SourceAPI or SourceFile
	Origin   string    `json:"origin"` // the endpoint URL or the file name
	Provider string    `json:"provider"`
	// FromDay and ToDay (YYYY-MM-DD) are the days [FromDay, ToDay) the
	// import covers: a day inside without rows had no usage.
	FromDay string `json:"from_day"`
	ToDay   string `json:"to_day"`
	Rows    uint64 `json:"rows"`
}

// CheckProvider accepts the providers whose reports are understood.
func CheckProvider(p string) error {
	switch p {
	case ProviderOpenAI, ProviderAnthropic:
		return nil
	}
	return fmt.Errorf("usage: %w: provider must be %s or %s", ErrInvalid, ProviderOpenAI, ProviderAnthropic)
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("usage: %w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

// checkText accepts an identifier as a report may carry it.
func checkText(field, v string) error {
	if len(v) > maxFieldLen || !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0 {
		return invalid("%s: not a bounded UTF-8 identifier", field)
	}
	return nil
}

// namedCount is a count and the field it came from, for error messages.
type namedCount struct {
	name string
	v    int64
}

func (c namedCount) check() error {
	if c.v < 0 || c.v > maxCount {
		return invalid("%s: %d is out of range", c.name, c.v)
	}
	return nil
}

// dayOf returns the UTC day of a bucket that starts at midnight UTC and is
// one day wide; reconciliation is per day, so other buckets are refused.
func dayOf(start, end time.Time) (string, error) {
	start, end = start.UTC(), end.UTC()
	if !start.Equal(start.Truncate(24*time.Hour)) || !end.Equal(start.Add(24*time.Hour)) {
		return "", invalid("bucket %s–%s is not one UTC day: import daily buckets (bucket_width=1d)", start.Format(time.RFC3339), end.Format(time.RFC3339))
	}
	return start.Format(time.DateOnly), nil
}

// Aggregate merges rows of the same provider, day, endpoint, model, project
// and key (a report grouped by more than these, e.g. service tier, has
// several), in a stable order. Requests and cache writes stay nil only if
// nil in every merged row.
func Aggregate(rows []Row) []Row {
	idx := map[string]int{}
	var out []Row
	for _, r := range rows {
		i, ok := idx[r.key()]
		if !ok {
			idx[r.key()] = len(out)
			out = append(out, r)
			continue
		}
		m := &out[i]
		m.Requests = AddKnown(m.Requests, r.Requests)
		m.CacheWriteTokens = AddKnown(m.CacheWriteTokens, r.CacheWriteTokens)
		m.InputTokens += r.InputTokens
		m.OutputTokens += r.OutputTokens
		m.CacheReadTokens += r.CacheReadTokens
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// AddKnown sums two counts that may be unknown (nil): unknown only if both
// are, never aliasing either.
func AddKnown(a, b *int64) *int64 {
	switch {
	case a == nil && b == nil:
		return nil
	case a == nil:
		return new(*b)
	case b == nil:
		return new(*a)
	}
	return new(*a + *b)
}

// Span returns the days [from, to) that rows cover, or "", "" for none.
func Span(rows []Row) (from, to string) {
	for _, r := range rows {
		if from == "" || r.Day < from {
			from = r.Day
		}
		if r.Day > to {
			to = r.Day
		}
	}
	if to == "" {
		return "", ""
	}
	t, _ := time.Parse(time.DateOnly, to)
	return from, t.AddDate(0, 0, 1).Format(time.DateOnly)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// ReportsRequests tells whether provider's report counts requests (OpenAI's
// num_model_requests); Anthropic's usage report counts tokens only.
func ReportsRequests(provider string) bool { return provider == ProviderOpenAI }
