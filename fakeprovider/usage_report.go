package fakeprovider

import (
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The fake answers daily buckets only (the real APIs also have 1h and 1m),
// and groups by what reconciliation needs.
const usageDay = 24 * time.Hour

// reportQuery is a usage request's range, grouping and page.
type reportQuery struct {
	start, end time.Time // bucket starts in [start, end)
	limit      int
	group      map[string]bool
}

// readReportQuery reads the parameters both APIs share under their names:
// the time range is parsed by the caller; group_by may come as group_by or
// group_by[], repeated.
func readReportQuery(q url.Values, start, end time.Time, groups []string) (reportQuery, *APIError) {
	rq := reportQuery{start: start.UTC().Truncate(usageDay), end: end.UTC(), limit: 7, group: map[string]bool{}}
	if bw := q.Get("bucket_width"); bw != "" && bw != "1d" {
		return rq, BadRequest("bucket_width", "", "This fake serves bucket_width=1d only.")
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 31 {
			return rq, BadRequest("limit", "", "limit must be between 1 and 31 for bucket_width=1d.")
		}
		rq.limit = n
	}
	for _, g := range append(q["group_by"], q["group_by[]"]...) {
		if !slices.Contains(groups, g) {
			return rq, BadRequest("group_by", "", fmt.Sprintf("Invalid group_by value: %q.", g))
		}
		rq.group[g] = true
	}
	if p := q.Get("page"); p != "" {
		raw, ok := strings.CutPrefix(p, "page_")
		b, err := base64.URLEncoding.DecodeString(raw)
		if !ok || err != nil || len(b) != 8 {
			return rq, BadRequest("page", "", "Invalid page token.")
		}
		at := time.Unix(int64(binary.BigEndian.Uint64(b)), 0).UTC()
		if at.Before(rq.start) || !at.Before(rq.end) {
			return rq, BadRequest("page", "", "Invalid page token.")
		}
		rq.start = at
	}
	if !rq.start.Before(rq.end) {
		return rq, BadRequest("end_time", "", "The end of the range must be after its start.")
	}
	return rq, nil
}

// pageToken encodes the start of the next page's first bucket.
func pageToken(t time.Time) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(t.Unix()))
	return "page_" + base64.URLEncoding.EncodeToString(b[:])
}

// buckets returns this page's bucket starts and the next page's token
// ("" for the last page).
func (rq reportQuery) buckets() ([]time.Time, string) {
	var out []time.Time
	t := rq.start
	for ; t.Before(rq.end) && len(out) < rq.limit; t = t.Add(usageDay) {
		out = append(out, t)
	}
	if t.Before(rq.end) {
		return out, pageToken(t)
	}
	return out, ""
}

// groupedCell is a cell with the dimensions not grouped by cleared.
type groupedCell struct {
	model, project, key string
}

// results sums the book's cells of provider/endpoint on day by the
// requested groups, in a stable order.
func (u *Usage) results(provider, endpoint string, d time.Time, group map[string]bool, projectGroup string) ([]groupedCell, []usageCount) {
	sums := map[groupedCell]*usageCount{}
	u.mu.Lock()
	for cell, c := range u.book {
		if cell.provider != provider || cell.endpoint != endpoint || !cell.day.Equal(d) {
			continue
		}
		var g groupedCell
		if group["model"] {
			g.model = cell.model
		}
		if group[projectGroup] {
			g.project = cell.key.Project
		}
		if group["api_key_id"] {
			g.key = cell.key.ID
		}
		s := sums[g]
		if s == nil {
			s = &usageCount{}
			sums[g] = s
		}
		s.requests += c.requests
		s.input += c.input
		s.output += c.output
		s.cacheRead += c.cacheRead
		s.cacheWrite += c.cacheWrite
	}
	u.mu.Unlock()
	keys := make([]groupedCell, 0, len(sums))
	for g := range sums {
		keys = append(keys, g)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.model != b.model {
			return a.model < b.model
		}
		if a.project != b.project {
			return a.project < b.project
		}
		return a.key < b.key
	})
	counts := make([]usageCount, len(keys))
	for i, g := range keys {
		counts[i] = *sums[g]
	}
	return keys, counts
}

func (u *Usage) adminKeyIs(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(u.cfg.AdminKey)) == 1
}

// openAIReport answers GET /v1/organization/usage/{completions,embeddings}.
func (u *Usage) openAIReport(w http.ResponseWriter, r *http.Request, endpoint string) {
	w.Header().Set("x-request-id", "req_"+randomString(32, hexDigits))
	if auth := r.Header.Get("Authorization"); len(auth) < 7 || auth[:7] != "Bearer " || !u.adminKeyIs(auth[7:]) {
		unauthorized("Invalid admin key: the usage API needs an organization admin key.").write(w, nil)
		return
	}
	q := r.URL.Query()
	start, err := strconv.ParseInt(q.Get("start_time"), 10, 64)
	if err != nil {
		BadRequest("start_time", "", "start_time is required (Unix seconds).").write(w, nil)
		return
	}
	end := u.cfg.Now()
	if e := q.Get("end_time"); e != "" {
		n, err := strconv.ParseInt(e, 10, 64)
		if err != nil {
			BadRequest("end_time", "", "end_time must be Unix seconds.").write(w, nil)
			return
		}
		end = time.Unix(n, 0)
	}
	rq, apiErr := readReportQuery(q, time.Unix(start, 0), end, []string{"model", "project_id", "api_key_id"})
	if apiErr != nil {
		apiErr.write(w, nil)
		return
	}
	type m = map[string]any
	starts, next := rq.buckets()
	data := make([]m, 0, len(starts))
	for _, t := range starts {
		cells, counts := u.results("openai", endpoint, t, rq.group, "project_id")
		results := make([]m, 0, len(cells))
		for i, g := range cells {
			c := counts[i]
			res := m{"object": "organization.usage." + endpoint + ".result", "input_tokens": c.input, "num_model_requests": c.requests,
				"project_id": nullIfEmpty(g.project), "user_id": nil, "api_key_id": nullIfEmpty(g.key), "model": nullIfEmpty(g.model)}
			if endpoint == "completions" {
				res["output_tokens"], res["input_cached_tokens"] = c.output, c.cacheRead
				res["input_audio_tokens"], res["output_audio_tokens"], res["batch"] = 0, 0, nil
			}
			results = append(results, res)
		}
		data = append(data, m{"object": "bucket", "start_time": t.Unix(), "end_time": t.Add(usageDay).Unix(), "results": results})
	}
	writeJSON(w, http.StatusOK, m{"object": "page", "data": data, "has_more": next != "", "next_page": nullIfEmpty(next)})
}

// anthropicReport answers GET /v1/organizations/usage_report/messages.
func (u *Usage) anthropicReport(w http.ResponseWriter, r *http.Request) {
	requestID := "req_011C" + randomString(20, base62)
	w.Header().Set("request-id", requestID)
	fail := func(e *APIError) { e.writeAnthropic(w, requestID, nil) }
	if !u.adminKeyIs(r.Header.Get("x-api-key")) {
		fail(&APIError{Status: http.StatusUnauthorized, Message: "invalid x-api-key: the usage report needs an admin key"})
		return
	}
	if r.Header.Get("anthropic-version") == "" {
		fail(&APIError{Status: http.StatusBadRequest, Message: "anthropic-version: header is required"})
		return
	}
	q := r.URL.Query()
	start, err := time.Parse(time.RFC3339Nano, q.Get("starting_at"))
	if err != nil {
		fail(&APIError{Status: http.StatusBadRequest, Message: "starting_at: an RFC 3339 timestamp is required"})
		return
	}
	end := u.cfg.Now()
	if e := q.Get("ending_at"); e != "" {
		if end, err = time.Parse(time.RFC3339Nano, e); err != nil {
			fail(&APIError{Status: http.StatusBadRequest, Message: "ending_at: not an RFC 3339 timestamp"})
			return
		}
	}
	rq, apiErr := readReportQuery(q, start, end, []string{"model", "workspace_id", "api_key_id"})
	if apiErr != nil {
		fail(&APIError{Status: http.StatusBadRequest, Message: apiErr.Param + ": " + apiErr.Message})
		return
	}
	type m = map[string]any
	starts, next := rq.buckets()
	data := make([]m, 0, len(starts))
	for _, t := range starts {
		cells, counts := u.results("anthropic", "messages", t, rq.group, "workspace_id")
		results := make([]m, 0, len(cells))
		for i, g := range cells {
			c := counts[i]
			results = append(results, m{
				"uncached_input_tokens":   c.input - c.cacheRead - c.cacheWrite,
				"cache_creation":          m{"ephemeral_1h_input_tokens": 0, "ephemeral_5m_input_tokens": c.cacheWrite},
				"cache_read_input_tokens": c.cacheRead,
				"output_tokens":           c.output,
				"server_tool_use":         m{"web_search_requests": 0},
				"api_key_id":              nullIfEmpty(g.key), "workspace_id": nullIfEmpty(g.project), "model": nullIfEmpty(g.model),
				"service_tier": nil, "context_window": nil,
			})
		}
		data = append(data, m{"starting_at": t.Format(time.RFC3339), "ending_at": t.Add(usageDay).Format(time.RFC3339), "results": results})
	}
	writeJSON(w, http.StatusOK, m{"data": data, "has_more": next != "", "next_page": nullIfEmpty(next)})
}
