package usage

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Default API bases.
const (
	OpenAIBaseURL    = "https://api.openai.com"
	AnthropicBaseURL = "https://api.anthropic.com"
	anthropicVersion = "2023-06-01"
)

// Bounds of one pull: a page is a few KB per day and group; a month of days
// is one page at limit 31, so thousands of pages mean a broken cursor.
const (
	maxPageBytes = 32 << 20
	maxPages     = 10000
	pageDays     = 31
)

// Client pulls a provider's usage report with an admin key.
type Client struct {
	Provider string
	// BaseURL is the API base (scheme and host, no /v1); empty means the
	// provider's public API.
	BaseURL string
	// AdminKey is the organization admin key; it is sent only in the
	// provider's auth header and never appears in errors or provenance.
	AdminKey string
	HTTP     *http.Client
}

// Endpoints returns the report URLs a pull reads, for provenance.
func (c Client) Endpoints() []string {
	base := strings.TrimSuffix(c.base(), "/")
	if c.Provider == ProviderAnthropic {
		return []string{base + "/v1/organizations/usage_report/messages"}
	}
	return []string{base + "/v1/organization/usage/completions", base + "/v1/organization/usage/embeddings"}
}

func (c Client) base() string {
	switch {
	case c.BaseURL != "":
		return c.BaseURL
	case c.Provider == ProviderAnthropic:
		return AnthropicBaseURL
	}
	return OpenAIBaseURL
}

// Pull reads the daily usage of the days [from, to) (UTC midnights),
// grouped by model, project or workspace, and API key, following the
// pagination to its end.
func (c Client) Pull(ctx context.Context, from, to time.Time) ([]Row, error) {
	if err := CheckProvider(c.Provider); err != nil {
		return nil, err
	}
	if c.AdminKey == "" {
		return nil, fmt.Errorf("usage: %s: no admin key", c.Provider)
	}
	from, to = from.UTC().Truncate(24*time.Hour), to.UTC().Truncate(24*time.Hour)
	if !from.Before(to) {
		return nil, fmt.Errorf("usage: pull: from must be a day before to")
	}
	var rows []Row
	for _, endpoint := range c.Endpoints() {
		page := ""
		seen := map[string]bool{}
		for n := 0; ; n++ {
			if n == maxPages {
				return nil, fmt.Errorf("usage: %s: more than %d pages", endpoint, maxPages)
			}
			body, err := c.get(ctx, endpoint, c.params(from, to, page))
			if err != nil {
				return nil, err
			}
			var got []Row
			if c.Provider == ProviderAnthropic {
				got, page, err = ParseAnthropicPage(body)
			} else {
				got, page, err = ParseOpenAIPage(endpoint[strings.LastIndexByte(endpoint, '/')+1:], body)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %w", endpoint, err)
			}
			if len(rows)+len(got) > MaxRows {
				return nil, fmt.Errorf("usage: %s: more than %d rows", endpoint, MaxRows)
			}
			rows = append(rows, got...)
			if page == "" {
				break
			}
			// A cursor seen before would loop to the page bound.
			if seen[page] {
				return nil, fmt.Errorf("usage: %s: the report repeats a page cursor", endpoint)
			}
			seen[page] = true
		}
	}
	return rows, nil
}

// params asks for daily buckets grouped by model, project/workspace and
// key. OpenAI takes repeated group_by and Unix seconds; Anthropic group_by[]
// and RFC 3339 times (see PROVENANCE.md).
func (c Client) params(from, to time.Time, page string) url.Values {
	v := url.Values{"bucket_width": {"1d"}, "limit": {strconv.Itoa(pageDays)}}
	if c.Provider == ProviderAnthropic {
		v.Set("starting_at", from.Format(time.RFC3339))
		v.Set("ending_at", to.Format(time.RFC3339))
		v["group_by[]"] = []string{"model", "workspace_id", "api_key_id"}
	} else {
		v.Set("start_time", strconv.FormatInt(from.Unix(), 10))
		v.Set("end_time", strconv.FormatInt(to.Unix(), 10))
		v["group_by"] = []string{"model", "project_id", "api_key_id"}
	}
	if page != "" {
		v.Set("page", page)
	}
	return v
}

func (c Client) get(ctx context.Context, endpoint string, params url.Values) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, endpoint+"?"+params.Encode(), nil)
	if err != nil {
		return nil, fmt.Errorf("usage: %s: %w", endpoint, err)
	}
	if c.Provider == ProviderAnthropic {
		req.Header.Set("x-api-key", c.AdminKey)
		req.Header.Set("anthropic-version", anthropicVersion)
	} else {
		req.Header.Set("Authorization", "Bearer "+c.AdminKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("usage: GET %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("usage: GET %s: %w", endpoint, err)
	}
	if len(body) > maxPageBytes {
		return nil, fmt.Errorf("usage: GET %s: %w", endpoint, errors.New("page larger than 32 MiB"))
	}
	if resp.StatusCode != http.StatusOK {
		// The provider's own error words, bounded, without the admin key
		// should the server echo the request (a proxy, a wrong base URL).
		msg := strings.TrimSpace(strings.ReplaceAll(string(body), c.AdminKey, "[admin key]"))
		if len(msg) > 300 {
			msg = strings.ToValidUTF8(msg[:300], "") + "…"
		}
		return nil, fmt.Errorf("usage: GET %s: %s: %s", endpoint, resp.Status, msg)
	}
	return body, nil
}
