package apiclient

import (
	"context"
	"net/url"

	"github.com/docketlabs/docket/replay/runs"
)

// ReplayRequest starts a distribution replay of one call on the server
// (POST /api/v1/replays).
type ReplayRequest struct {
	TraceID    string `json:"trace_id"`
	SpanID     string `json:"span_id"`
	N          int    `json:"n"`
	MaxCostUSD string `json:"max_cost_usd"`
	Reason     string `json:"reason"`
}

// ReplayLimits are the bounds of a run started on the server; Enabled is
// false when its UI config does not enable replay.
type ReplayLimits struct {
	Enabled        bool    `json:"enabled"`
	MaxN           int     `json:"max_n"`
	MaxCostUSD     string  `json:"max_cost_usd"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
}

// ReplayLimits reads the server's bounds of a replay run.
func (c *Client) ReplayLimits(ctx context.Context) (ReplayLimits, error) {
	var l ReplayLimits
	err := c.Get(ctx, "/api/v1/replays/limits", &l)
	return l, err
}

// StartReplay starts a run; it goes on in the server's background, and
// Replay follows it.
func (c *Client) StartReplay(ctx context.Context, req ReplayRequest) (runs.Status, error) {
	var st runs.Status
	err := c.Post(ctx, "/api/v1/replays", req, &st)
	return st, err
}

// Replay reads the status of run id, which this client's user started.
func (c *Client) Replay(ctx context.Context, id string) (runs.Status, error) {
	var st runs.Status
	err := c.Get(ctx, "/api/v1/replays/"+url.PathEscape(id), &st)
	return st, err
}

// CancelReplay stops run id; the replays it did stay recorded. The
// status answered may still be running for a moment.
func (c *Client) CancelReplay(ctx context.Context, id string) (runs.Status, error) {
	var st runs.Status
	err := c.Post(ctx, "/api/v1/replays/"+url.PathEscape(id)+"/cancel", struct{}{}, &st)
	return st, err
}
