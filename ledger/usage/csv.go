package usage

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// MaxCSVBytes bounds a CSV file.
const MaxCSVBytes = 256 << 20

// Neither provider documents the columns of its dashboard's CSV export, so
// the parser reads the header and maps columns by name: the Usage API's own
// field names, and the few aliases listed here. Unknown columns are ignored;
// a missing required column is an error naming it.
var (
	dayColumns       = []string{"date", "day", "start_time", "starting_at", "bucket_start_time"}
	modelColumns     = []string{"model"}
	keyColumns       = []string{"api_key_id"}
	openAIProject    = []string{"project_id", "project"}
	anthropicProject = []string{"workspace_id", "workspace"}
	openAIEndpoint   = []string{"endpoint"}
	openAIRequests   = []string{"num_model_requests", "requests"}
	openAIInput      = []string{"input_tokens"}
	openAIOutput     = []string{"output_tokens"}
	openAICached     = []string{"input_cached_tokens", "cached_tokens"}
	anthUncached     = []string{"uncached_input_tokens"}
	anthRead         = []string{"cache_read_input_tokens"}
	anthWrite        = []string{"cache_creation_input_tokens"}
	anthWrite5m      = []string{"cache_creation_5m_input_tokens", "ephemeral_5m_input_tokens"}
	anthWrite1h      = []string{"cache_creation_1h_input_tokens", "ephemeral_1h_input_tokens"}
	anthOutput       = []string{"output_tokens"}
)

// ParseCSV reads a provider's usage export: a header row, then one row per
// day and group. Days are dates (2026-11-30), midnight UTC timestamps in
// RFC 3339, or Unix seconds at midnight UTC.
func ParseCSV(provider string, r io.Reader) ([]Row, error) {
	if err := CheckProvider(provider); err != nil {
		return nil, err
	}
	lr := &limitedReader{r: r, left: MaxCSVBytes}
	cr := csv.NewReader(lr)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if err != nil {
		return nil, csvError(lr, 1, err)
	}
	cols := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if _, dup := cols[h]; !dup {
			cols[h] = i
		}
	}
	var rows []Row
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, csvError(lr, line, err)
		}
		if len(rows) >= MaxRows {
			return nil, invalid("csv: more than %d rows", MaxRows)
		}
		rd := csvRecord{cols: cols, rec: rec}
		var row Row
		if provider == ProviderOpenAI {
			row, err = rd.openAI()
		} else {
			row, err = rd.anthropic()
		}
		if err != nil {
			return nil, fmt.Errorf("csv line %d: %w", line, err)
		}
		rows = append(rows, row)
	}
}

func csvError(lr *limitedReader, line int, err error) error {
	if lr.over {
		return invalid("csv: larger than %d bytes", MaxCSVBytes)
	}
	if errors.Is(err, io.EOF) {
		return invalid("csv: no header row")
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return invalid("csv line %d: %v", pe.Line, pe.Err)
	}
	return fmt.Errorf("usage: read csv line %d: %w", line, err)
}

type csvRecord struct {
	cols map[string]int
	rec  []string
}

// get returns the first of names present in the header and its value.
func (c csvRecord) get(names []string) (string, string, bool) {
	for _, n := range names {
		if i, ok := c.cols[n]; ok && i < len(c.rec) {
			return n, strings.TrimSpace(c.rec[i]), true
		}
	}
	return names[0], "", false
}

func (c csvRecord) text(names []string) (string, error) {
	name, v, _ := c.get(names)
	return v, checkText(name, v)
}

// count reads a count; an absent column or empty cell is an error when
// required, else 0 with ok false.
func (c csvRecord) count(names []string, required bool) (int64, bool, error) {
	name, v, present := c.get(names)
	if !present || v == "" {
		if required {
			return 0, false, invalid("column %s is missing or empty", name)
		}
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, false, invalid("%s is not a whole number", name)
	}
	return n, true, namedCount{name, n}.check()
}

func (c csvRecord) day() (string, error) {
	name, v, present := c.get(dayColumns)
	if !present || v == "" {
		return "", invalid("column %s (the day) is missing or empty", strings.Join(dayColumns, "/"))
	}
	if t, err := time.Parse(time.DateOnly, v); err == nil {
		return t.Format(time.DateOnly), nil
	}
	var t time.Time
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 && secs < 1<<37 {
		t = time.Unix(secs, 0)
	} else if t, err = time.Parse(time.RFC3339Nano, v); err != nil {
		return "", invalid("%s is not a date, an RFC 3339 time or Unix seconds", name)
	}
	if y := t.UTC().Year(); y < 1970 || y > 2200 {
		return "", invalid("%s is outside the years 1970–2200", name)
	}
	return dayOf(t, t.Add(24*time.Hour))
}

func (c csvRecord) common(provider string, project []string) (Row, error) {
	row := Row{Provider: provider}
	var err error
	if row.Day, err = c.day(); err != nil {
		return row, err
	}
	if row.Model, err = c.text(modelColumns); err != nil {
		return row, err
	}
	if row.ProjectID, err = c.text(project); err != nil {
		return row, err
	}
	row.APIKeyID, err = c.text(keyColumns)
	return row, err
}

func (c csvRecord) openAI() (Row, error) {
	row, err := c.common(ProviderOpenAI, openAIProject)
	if err != nil {
		return row, err
	}
	switch _, ep, _ := c.get(openAIEndpoint); ep {
	case "", EndpointCompletions:
		row.Endpoint = EndpointCompletions
	case EndpointEmbeddings:
		row.Endpoint = EndpointEmbeddings
	default:
		return row, invalid("endpoint must be %s or %s", EndpointCompletions, EndpointEmbeddings)
	}
	req, _, err := c.count(openAIRequests, true)
	if err != nil {
		return row, err
	}
	row.Requests = new(req)
	if row.InputTokens, _, err = c.count(openAIInput, true); err != nil {
		return row, err
	}
	if row.OutputTokens, _, err = c.count(openAIOutput, row.Endpoint == EndpointCompletions); err != nil {
		return row, err
	}
	if row.CacheReadTokens, _, err = c.count(openAICached, false); err != nil {
		return row, err
	}
	return row, row.check()
}

func (c csvRecord) anthropic() (Row, error) {
	base, err := c.common(ProviderAnthropic, anthropicProject)
	if err != nil {
		return base, err
	}
	uncached, _, err := c.count(anthUncached, true)
	if err != nil {
		return base, err
	}
	read, _, err := c.count(anthRead, false)
	if err != nil {
		return base, err
	}
	write, _, err := c.count(anthWrite, false)
	if err != nil {
		return base, err
	}
	// The total, or its 5-minute and 1-hour parts; not both.
	for _, part := range [][]string{anthWrite5m, anthWrite1h} {
		v, ok, countErr := c.count(part, false)
		if countErr != nil {
			return base, countErr
		}
		if ok {
			if _, _, total := c.get(anthWrite); total {
				return base, invalid("give cache_creation_input_tokens or its 5m/1h parts, not both")
			}
			write += v
		}
	}
	output, _, err := c.count(anthOutput, true)
	if err != nil {
		return base, err
	}
	return anthropicRow(base.Day, base.Model, base.ProjectID, base.APIKeyID, uncached, read, write, output)
}

// limitedReader fails once more than left bytes are read, so a file over
// the bound is an error rather than silently cut.
type limitedReader struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		var one [1]byte
		if n, _ := l.r.Read(one[:]); n > 0 {
			l.over = true
			return 0, errors.New("too large")
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}
