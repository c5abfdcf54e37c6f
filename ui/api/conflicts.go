package api

import (
	"context"
	"slices"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ui/auth"
)

// conflicts lists the rows of a trace that arrived under a recorded key
// with other content, in the tenants granted: the page shows the recorded
// row and says that someone tried to rewrite it, who and when.
func (a *api) conflicts(ctx context.Context, traceID string, granted, tenants []string) ([]ledgerstore.Conflict, error) {
	list, err := a.Ledger.ConflictsByTrace(ctx, traceID, tenants...)
	if err != nil {
		return nil, err
	}
	list = slices.DeleteFunc(list, func(c ledgerstore.Conflict) bool { return !auth.Covers(granted, c.Tenant) })
	if list == nil {
		list = []ledgerstore.Conflict{}
	}
	return list, nil
}
