package usage

import (
	"encoding/json"
	"fmt"
	"time"
)

// OpenAI's organization Usage API: GET /v1/organization/usage/completions
// and /embeddings answer a page of time buckets ({"object":"page","data":
// [{"object":"bucket","start_time","end_time","results":[…]}],"has_more",
// "next_page"}), each result with the counts and, per group_by, model,
// project_id and api_key_id (null when not grouped). See PROVENANCE.md.
type openAIPage struct {
	Object string `json:"object"`
	Data   []struct {
		StartTime int64          `json:"start_time"`
		EndTime   int64          `json:"end_time"`
		Results   []openAIResult `json:"results"`
	} `json:"data"`
	HasMore  bool    `json:"has_more"`
	NextPage *string `json:"next_page"`
}

type openAIResult struct {
	InputTokens       *int64  `json:"input_tokens"`
	OutputTokens      *int64  `json:"output_tokens"` // absent for embeddings
	InputCachedTokens *int64  `json:"input_cached_tokens"`
	NumModelRequests  *int64  `json:"num_model_requests"`
	Model             *string `json:"model"`
	ProjectID         *string `json:"project_id"`
	APIKeyID          *string `json:"api_key_id"`
}

// ParseOpenAIPage reads one page of the Usage API for endpoint
// (EndpointCompletions or EndpointEmbeddings) and returns its rows and the
// cursor of the next page ("" when there is none).
func ParseOpenAIPage(endpoint string, body []byte) ([]Row, string, error) {
	if endpoint != EndpointCompletions && endpoint != EndpointEmbeddings {
		return nil, "", invalid("openai endpoint must be %s or %s", EndpointCompletions, EndpointEmbeddings)
	}
	var p openAIPage
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, "", invalid("openai usage page: %v", err)
	}
	if p.Object != "page" {
		return nil, "", invalid(`openai usage page: object is not "page"`)
	}
	var rows []Row
	for i, b := range p.Data {
		day, err := dayOf(time.Unix(b.StartTime, 0), time.Unix(b.EndTime, 0))
		if err != nil {
			return nil, "", fmt.Errorf("bucket %d: %w", i, err)
		}
		for j, r := range b.Results {
			row, err := r.row(endpoint, day)
			if err != nil {
				return nil, "", fmt.Errorf("bucket %d result %d: %w", i, j, err)
			}
			rows = append(rows, row)
		}
	}
	next := ""
	if p.HasMore {
		if p.NextPage == nil || *p.NextPage == "" {
			return nil, "", invalid("openai usage page: has_more without next_page")
		}
		next = *p.NextPage
	}
	return rows, next, nil
}

func (r openAIResult) row(endpoint, day string) (Row, error) {
	if r.InputTokens == nil || r.NumModelRequests == nil || (endpoint == EndpointCompletions && r.OutputTokens == nil) {
		return Row{}, invalid("a required count (input_tokens, output_tokens, num_model_requests) is missing")
	}
	row := Row{Provider: ProviderOpenAI, Day: day, Endpoint: endpoint,
		Model: deref(r.Model), ProjectID: deref(r.ProjectID), APIKeyID: deref(r.APIKeyID),
		Requests: new(*r.NumModelRequests), InputTokens: *r.InputTokens}
	if r.OutputTokens != nil {
		row.OutputTokens = *r.OutputTokens
	}
	if r.InputCachedTokens != nil {
		row.CacheReadTokens = *r.InputCachedTokens
	}
	return row, row.check()
}

// check validates a parsed row.
func (r Row) check() error {
	for _, f := range []struct{ name, v string }{{"model", r.Model}, {"project", r.ProjectID}, {"api_key_id", r.APIKeyID}} {
		if err := checkText(f.name, f.v); err != nil {
			return err
		}
	}
	counts := []namedCount{{"input_tokens", r.InputTokens}, {"output_tokens", r.OutputTokens}, {"cache_read_tokens", r.CacheReadTokens}}
	if r.Requests != nil {
		counts = append(counts, namedCount{"requests", *r.Requests})
	}
	if r.CacheWriteTokens != nil {
		counts = append(counts, namedCount{"cache_write_tokens", *r.CacheWriteTokens})
	}
	for _, c := range counts {
		if err := c.check(); err != nil {
			return err
		}
	}
	if r.CacheReadTokens > r.InputTokens {
		return invalid("cached input tokens exceed input tokens")
	}
	return nil
}
