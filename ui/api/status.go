package api

import (
	"net/http"

	"github.com/docketlabs/docket/ledger/storageconfig"
	"github.com/docketlabs/docket/ui/auth"
)

// statusBody is what the UI's banner shows: which store is unavailable.
type statusBody struct {
	Ledger storageconfig.State `json:"ledger"`
	// ContentUnavailable: a content store is configured but could not be
	// opened yet.
	ContentUnavailable bool `json:"content_store_unavailable"`
}

func (a *api) status(*http.Request, auth.Session) (int, any, error) {
	b := statusBody{Ledger: storageconfig.State{Available: true}}
	if a.LedgerState != nil {
		b.Ledger = a.LedgerState()
	}
	if c, ok := a.Content.(interface{ Available() bool }); ok {
		b.ContentUnavailable = !c.Available()
	}
	return http.StatusOK, b, nil
}
