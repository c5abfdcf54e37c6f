package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
	"github.com/docketlabs/docket/replay/distribution"
)

// Record is one row of replay_results: a replayed call, linked to the
// original by (tenant, trace_id, span_id).
type Record struct {
	RunID         string    `json:"run_id"`
	At            time.Time `json:"at"`
	Actor         string    `json:"actor"`
	Purpose       string    `json:"purpose"`
	Tenant        string    `json:"tenant"`
	TraceID       string    `json:"trace_id"`
	SpanID        string    `json:"span_id"`
	Provider      string    `json:"provider"`
	ResponseModel string    `json:"response_model"`
	Status        string    `json:"status"`
	Requested     uint32    `json:"requested"`
	Completed     uint32    `json:"completed"`
	// ExactMatches is nil when nothing was replayed.
	ExactMatches *uint32 `json:"exact_matches"`
	// Report is a Summary in JSON.
	Report string `json:"report"`
}

// Summary is what the ledger keeps of a Result: everything but output
// text, which stays behind the reveal checks.
type Summary struct {
	Outcome
	ExactMatchRate *float64 `json:"exact_match_rate,omitempty"`
	// Variants are the distinct outputs' counts and divergences, most
	// frequent first, without their text.
	Variants []VariantSummary `json:"variants,omitempty"`
	// Tokenizer and TokenNote are the distribution's: which tokenizer
	// split the outputs, or why divergence has no token positions.
	Tokenizer string `json:"tokenizer,omitempty"`
	TokenNote string `json:"token_note,omitempty"`
}

// VariantSummary is a distinct output without its text.
type VariantSummary struct {
	Count      int                      `json:"count"`
	Matches    bool                     `json:"matches_original"`
	Divergence *distribution.Divergence `json:"divergence,omitempty"`
}

// Summarize is what the ledger keeps of r.
func Summarize(r Result) Summary {
	s := Summary{Outcome: r.Outcome}
	if d := r.Distribution; d != nil {
		s.ExactMatchRate = &d.ExactMatchRate
		s.Tokenizer, s.TokenNote = d.Tokenizer, d.TokenNote
		for _, v := range d.Variants {
			s.Variants = append(s.Variants, VariantSummary{Count: v.Count, Matches: v.Matches, Divergence: v.Divergence})
		}
	}
	return s
}

// record writes the replay_results row of one call's result in run runID.
func (r *Runner) record(ctx context.Context, runID string, at time.Time, actor, purpose string, res Result) error {
	summary, err := json.Marshal(Summarize(res))
	if err != nil {
		return fmt.Errorf("replay: encode summary: %w", err)
	}
	rec := Record{RunID: runID, At: at, Actor: actor, Purpose: purpose, Tenant: res.Tenant,
		TraceID: res.TraceID, SpanID: res.SpanID, Provider: res.Provider, ResponseModel: res.ResponseModel, Status: res.Status,
		Requested: uint32(res.Requested), Completed: uint32(res.Completed), Report: string(summary)}
	if res.Distribution != nil {
		n := uint32(res.Distribution.ExactMatches)
		rec.ExactMatches = &n
	}
	row, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("replay: encode result: %w", err)
	}
	if err := r.Ledger.Engine().Insert(ctx, queries.MustGet("replay_insert_results"), "JSONEachRow", row); err != nil {
		return fmt.Errorf("replay: record results: %w", err)
	}
	return nil
}

// Records returns the recorded replay results of a trace in store, in
// tenants (every tenant when none is named, or ""), oldest first. It needs
// only the ledger, not a runner. Naming the tenants makes it a primary-key
// read.
func Records(ctx context.Context, store *ledgerstore.Store, traceID string, tenants ...string) ([]Record, error) {
	params := map[string]any{"trace_id": traceID}
	if err := storage.BindTenants(params, len(tenants) == 0 || slices.Contains(tenants, ""), tenants); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	out, err := storage.QueryRows[Record](ctx, store.Engine(), queries.MustGet("replay_results_by_trace"), params)
	if err != nil {
		return nil, fmt.Errorf("replay: read results: %w", err)
	}
	return out, nil
}
