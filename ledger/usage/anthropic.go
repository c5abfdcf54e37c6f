package usage

import (
	"encoding/json"
	"fmt"
	"time"
)

// Anthropic's Admin usage report: GET /v1/organizations/usage_report/messages
// answers {"data":[{"starting_at","ending_at","results":[…]}],"has_more",
// "next_page"}; a result counts uncached_input_tokens, cache_read_input_tokens,
// cache_creation.{ephemeral_5m,ephemeral_1h}_input_tokens and output_tokens,
// and names model, workspace_id and api_key_id per group_by (null
// otherwise). It counts no requests. See PROVENANCE.md.
type anthropicPage struct {
	Data []struct {
		StartingAt time.Time         `json:"starting_at"`
		EndingAt   time.Time         `json:"ending_at"`
		Results    []anthropicResult `json:"results"`
	} `json:"data"`
	HasMore  bool    `json:"has_more"`
	NextPage *string `json:"next_page"`
}

type anthropicResult struct {
	UncachedInputTokens  *int64 `json:"uncached_input_tokens"`
	CacheReadInputTokens *int64 `json:"cache_read_input_tokens"`
	CacheCreation        *struct {
		Ephemeral5m *int64 `json:"ephemeral_5m_input_tokens"`
		Ephemeral1h *int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	OutputTokens *int64  `json:"output_tokens"`
	Model        *string `json:"model"`
	WorkspaceID  *string `json:"workspace_id"`
	APIKeyID     *string `json:"api_key_id"`
}

// ParseAnthropicPage reads one page of the messages usage report and returns
// its rows and the next page's cursor ("" when there is none).
func ParseAnthropicPage(body []byte) ([]Row, string, error) {
	var p anthropicPage
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, "", invalid("anthropic usage report: %v", err)
	}
	var rows []Row
	for i, b := range p.Data {
		day, err := dayOf(b.StartingAt, b.EndingAt)
		if err != nil {
			return nil, "", fmt.Errorf("bucket %d: %w", i, err)
		}
		for j, r := range b.Results {
			if r.UncachedInputTokens == nil || r.OutputTokens == nil {
				return nil, "", fmt.Errorf("bucket %d result %d: %w", i, j, invalid("uncached_input_tokens or output_tokens is missing"))
			}
			var read, w5, w1 int64
			if r.CacheReadInputTokens != nil {
				read = *r.CacheReadInputTokens
			}
			if c := r.CacheCreation; c != nil {
				if c.Ephemeral5m != nil {
					w5 = *c.Ephemeral5m
				}
				if c.Ephemeral1h != nil {
					w1 = *c.Ephemeral1h
				}
			}
			row, err := anthropicRow(day, deref(r.Model), deref(r.WorkspaceID), deref(r.APIKeyID), *r.UncachedInputTokens, read, w5+w1, *r.OutputTokens)
			if err != nil {
				return nil, "", fmt.Errorf("bucket %d result %d: %w", i, j, err)
			}
			rows = append(rows, row)
		}
	}
	next := ""
	if p.HasMore {
		if p.NextPage == nil || *p.NextPage == "" {
			return nil, "", invalid("anthropic usage report: has_more without next_page")
		}
		next = *p.NextPage
	}
	return rows, next, nil
}

// anthropicRow counts input inclusively: uncached + cache reads + cache writes.
func anthropicRow(day, model, workspace, key string, uncached, read, write, output int64) (Row, error) {
	for _, c := range []namedCount{{"uncached_input_tokens", uncached}, {"cache_read_input_tokens", read}, {"cache_creation_input_tokens", write}} {
		if err := c.check(); err != nil {
			return Row{}, err
		}
	}
	row := Row{Provider: ProviderAnthropic, Day: day, Endpoint: EndpointMessages, Model: model, ProjectID: workspace, APIKeyID: key,
		InputTokens: uncached + read + write, OutputTokens: output, CacheReadTokens: read, CacheWriteTokens: new(write)}
	return row, row.check()
}
