package ledgerstore

import (
	"context"
	"fmt"
	"time"

	"github.com/docketlabs/docket/ledger/storage"
	"github.com/docketlabs/docket/queries"
)

// TenantCounts is what the ledger holds of one tenant's calls: the ledger's
// side of the completeness account (package completeness).
type TenantCounts struct {
	Tenant string `json:"tenant"`
	// Spans are the call spans stored (deduplicated) that Docket received
	// in the range; Flagged those of them with a flagged value.
	Spans   int64 `json:"spans"`
	Flagged int64 `json:"flagged"`
	// Conflicts are call row versions sent again under a stored key with
	// other content and not applied, for rows that started in the range.
	Conflicts int64 `json:"conflicts"`
}

// CountByTenant counts the calls received in [from, to) per tenant,
// ordered by tenant.
func (s *Store) CountByTenant(ctx context.Context, from, to time.Time) ([]TenantCounts, error) {
	if !from.Before(to) {
		return nil, fmt.Errorf("ledger: count by tenant: the range [%s, %s) is empty", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	rows, err := storage.QueryRows[TenantCounts](ctx, s.eng, queries.MustGet("count_by_tenant"), map[string]any{"from": from.UTC(), "to": to.UTC()})
	if err != nil {
		return nil, fmt.Errorf("ledger: count by tenant: %w", err)
	}
	if rows == nil {
		rows = []TenantCounts{}
	}
	return rows, nil
}
