package uiextension

import (
	"context"
	"fmt"
	"log/slog"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/docketlabs/docket/ledger/storageconfig"
)

// openLedger finds the ledger, or opens the UI's own (deprecated inline
// storage), and starts without it if it cannot be opened: the UI then serves
// sign-in and its status (the banner) and answers ledger pages with 503,
// and opens the ledger as soon as it can. A collector whose UI cannot reach
// the ledger still receives calls, which wait in the ledger exporter's
// queue. A ledgerstorage extension reports its own state to the
// collector's health; for its own engine the UI does.
func (u *uiExtension) openLedger(ctx context.Context, host component.Host, logger *slog.Logger) error {
	r, owned, err := u.cfg.Storage.Ledger(ctx, host)
	if err != nil {
		return fmt.Errorf("docketui: %w", err)
	}
	u.ledger, u.ownLedger = r, owned
	if !owned {
		return nil
	}
	logger.Warn(storageconfig.Deprecation)
	st := r.State()
	if st.Available {
		return nil
	}
	logger.Error("ledger unavailable: the UI starts without it and opens it when it can", "err", st.Error)
	componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(storageconfig.ErrUnavailable))
	u.watch = make(chan struct{})
	go r.Watch(u.watch, func() {
		logger.Info("ledger available: the UI serves it again")
		componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
	})
	return nil
}
