package api

import (
	"net/http"

	"github.com/docketlabs/docket/ledger/backend"
	"github.com/docketlabs/docket/ui/auth"
)

// statusBody is what the UI's banner shows: which store is unavailable.
type statusBody struct {
	Ledger backend.State `json:"ledger"`
	// Content is false when no content store is configured or it failed.
	Content bool `json:"content_store_available"`
}

func (a *api) status(*http.Request, auth.Session) (int, any, error) {
	b := statusBody{Ledger: backend.State{Available: true}, Content: a.Content != nil}
	if a.LedgerState != nil {
		b.Ledger = a.LedgerState()
	}
	return http.StatusOK, b, nil
}
