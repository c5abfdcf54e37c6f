package ledgerstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/docketlabs/docket/ledger/storage"
)

// Values of Conflict.Source: the ledger table whose row was contested.
const (
	SourceCalls    = "llm_calls"
	SourceEvidence = "evidence_spans"
)

// Conflict is a row received under the key of a stored row, with other
// content. The stored row is never replaced: the first ingest of a key is
// the row every reader sees, and each other version is kept as a conflict.
// Hashes are SHA-256 over every column but ingested_at.
type Conflict struct {
	Source             string    `json:"source"`
	Tenant             string    `json:"tenant"`
	TraceID            string    `json:"trace_id"`
	SpanID             string    `json:"span_id"`
	OriginalHash       string    `json:"original_hash"`
	OriginalService    string    `json:"original_service"`
	OriginalIngestedAt time.Time `json:"original_ingested_at"`
	ConflictingHash    string    `json:"conflicting_hash"`
	// ConflictingService is the sender's service.name (its tenant is
	// Tenant: the key includes it).
	ConflictingService string `json:"conflicting_service"`
	// ReceivedAt is when this version first arrived.
	ReceivedAt time.Time `json:"received_at"`
}

// ConflictsByTrace returns the conflicts of one trace in tenants, or of
// every tenant when none is named; callers filter by the tenants their
// reader may see. Naming the tenants makes each a primary-key read (the
// versions are ordered by tenant first); every tenant is a scan by the
// trace's index. The row_conflicts view is read only for the tenants in
// which a key of the trace holds several versions: almost no trace has
// any, and finding that out is one cheaper read for every tenant at once.
func (s *Store) ConflictsByTrace(ctx context.Context, traceID string, tenants ...string) ([]Conflict, error) {
	params := map[string]any{"trace_id": traceID}
	// "" names every tenant, as in conflicts_by_trace.sql.
	if err := storage.BindTenants(params, len(tenants) == 0 || slices.Contains(tenants, ""), tenants); err != nil {
		return nil, fmt.Errorf("ledger: %w", err)
	}
	contested := map[string]bool{}
	err := s.query(ctx, "conflict_tenants_by_trace", params,
		func(row []byte) error {
			var r struct {
				Tenant string `json:"tenant"`
			}
			decodeErr := json.Unmarshal(row, &r)
			contested[r.Tenant] = true
			return decodeErr
		})
	if err != nil || len(contested) == 0 {
		return nil, err
	}
	if len(tenants) == 0 {
		tenants = []string{""}
	}
	var out []Conflict
	for _, t := range tenants {
		if t != "" && !contested[t] {
			continue
		}
		if err := s.query(ctx, "conflicts_by_trace", map[string]any{"trace_id": traceID, "tenant": t}, storage.DecodeRows(&out)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
