package views

import (
	"context"
	"errors"

	"github.com/docketlabs/docket/ledger/ledgerstore"
	"github.com/docketlabs/docket/ledger/storage"
)

// FacetValues are the values each filter can take among the calls a Filter
// selects: distinct, non-empty, sorted, at most MaxFacetValues each.
type FacetValues struct {
	Tenants   []string `json:"tenants"`
	Services  []string `json:"services"`
	Models    []string `json:"models"`
	Providers []string `json:"providers"`
	Statuses  []string `json:"statuses"`
}

// MaxFacetValues bounds each list of FacetValues.
const MaxFacetValues = 500

// Facets lists the values of the calls f selects. Models are response and
// request models alike, as Filter.Model matches either.
func Facets(ctx context.Context, store *ledgerstore.Store, f Filter) (FacetValues, error) {
	var rows []FacetValues
	if err := query(ctx, store, "views_facets", f, map[string]any{"max": uint32(MaxFacetValues)}, storage.DecodeRows(&rows)); err != nil {
		return FacetValues{}, err
	}
	if len(rows) != 1 {
		return FacetValues{}, errors.New("views: facets: the engine returned no row")
	}
	return rows[0], nil
}
