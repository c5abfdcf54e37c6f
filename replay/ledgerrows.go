package replay

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/pricing"
	"github.com/docketlabs/docket/replay/providers"
)

// Each replay is an LLM call like any other: it spends money and answers
// with a snapshot, so it lands in the ledger. Its rows share the run's ID as
// trace ID (a replay run is one trace) and name the call they replay in
// request_params.
const (
	replayService      = "docket-replay"
	paramRunID         = conventions.ReplayPrefix + "run_id"
	paramOfTraceID     = conventions.ReplayPrefix + "of_trace_id"
	paramOfSpanID      = conventions.ReplayPrefix + "of_span_id"
	replayContentState = "not_captured"
)

// replayCall builds the ledger row of one replay of original.
func replayCall(runID string, original ledger.Call, req providers.Request, out providers.Result, sendErr error,
	start, end time.Time, prices *pricing.Table) ledger.Call {
	var span [8]byte
	_, _ = rand.Read(span[:])
	c := ledger.Call{
		Tenant: original.Tenant, TraceID: runID, SpanID: hex.EncodeToString(span[:]),
		ServiceName: replayService, SpanName: original.Operation + " " + original.ResponseModel,
		StartTime: start.UTC(), EndTime: end.UTC(), DurationMS: float64(end.Sub(start)) / float64(time.Millisecond),
		Operation: original.Operation, Provider: original.Provider,
		RequestModel: original.ResponseModel, ResponseModel: out.ResponseModel, ResponseID: out.ResponseID,
		InputTokens: out.Usage.Input, OutputTokens: out.Usage.Output, CacheReadTokens: out.Usage.CacheRead,
		CacheWriteTokens: out.Usage.CacheWrite, ReasoningTokens: out.Usage.Reasoning,
		FinishReasons: []string{}, Status: ledger.StatusOK,
		Temperature: req.Params.Temperature, TopP: req.Params.TopP, TopK: req.Params.TopK,
		MaxTokens: req.Params.MaxTokens, Seed: req.Params.Seed, StopSequences: req.Params.StopSequences,
		RequestParams: map[string]string{paramRunID: runID, paramOfTraceID: original.TraceID, paramOfSpanID: original.SpanID},
		ContentStatus: replayContentState, AttributeIssues: []string{}, IngestedAt: time.Now().UTC(),
	}
	if c.StopSequences == nil {
		c.StopSequences = []string{}
	}
	if out.TTFT != nil {
		ms := float64(*out.TTFT) / float64(time.Millisecond)
		c.TTFTMS = &ms
	}
	if r := out.Output.FinishReason; r != "" {
		c.FinishReasons = []string{r}
	}
	if out.HTTPStatus != 0 {
		code := int64(out.HTTPStatus)
		c.HTTPStatus = &code
	}
	if sendErr != nil {
		c.Status, c.ErrorType = ledger.StatusError, "replay_failed"
	}
	c.Derive(prices)
	return c
}
