package completeness

import (
	"context"
	"fmt"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/engine"
	"github.com/docketlabs/docket/queries"
)

// LedgerTenant is what the ledger holds of one tenant's calls.
type LedgerTenant struct {
	Tenant string `json:"tenant"`
	// Spans are the call spans stored (deduplicated) that Docket received
	// in the range; Flagged those of them with a flagged value.
	Spans   int64 `json:"spans"`
	Flagged int64 `json:"flagged"`
	// Conflicts are call row versions sent again under a stored key with
	// other content and not applied, for rows that started in the range.
	Conflicts int64 `json:"conflicts"`
}

// Ledger returns the ledger's side of the account for [from, to), per
// tenant, ordered by tenant.
func Ledger(ctx context.Context, st *ledger.Store, from, to time.Time) ([]LedgerTenant, error) {
	if !from.Before(to) {
		return nil, fmt.Errorf("completeness: the range [%s, %s) is empty", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	rows, err := engine.QueryRows[LedgerTenant](ctx, st.Engine(), queries.MustGet("completeness_ledger"),
		map[string]any{"from": from.UTC(), "to": to.UTC()})
	if err != nil {
		return nil, fmt.Errorf("completeness: ledger side: %w", err)
	}
	if rows == nil {
		rows = []LedgerTenant{}
	}
	return rows, nil
}
