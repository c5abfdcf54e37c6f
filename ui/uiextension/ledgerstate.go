package uiextension

import (
	"context"
	"log/slog"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/docketlabs/docket/ledger/storageconfig"
)

// ledgerRetry is how often an unavailable ledger is opened again.
const ledgerRetry = 5 * time.Second

// openLedger opens the ledger, or starts without it: the UI then serves
// sign-in and its status (the banner) and answers ledger pages with 503,
// reports a recoverable error to the collector's health, and opens the
// ledger as soon as it can. A collector whose UI cannot reach the ledger
// still receives calls, which wait in the ledger exporter's queue.
func (u *uiExtension) openLedger(ctx context.Context, host component.Host, logger *slog.Logger) *storageconfig.Reopening {
	r := storageconfig.OpenReopening(ctx, u.cfg.Storage, ledgerRetry)
	st := r.State()
	if st.Available {
		return r
	}
	logger.Error("ledger unavailable: the UI starts without it and opens it when it can", "err", st.Error)
	componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(storageconfig.ErrUnavailable))
	u.watch = make(chan struct{})
	go func() {
		t := time.NewTicker(ledgerRetry)
		defer t.Stop()
		for {
			select {
			case <-u.watch:
				return
			case <-t.C:
				if r.Retry(context.Background()) {
					logger.Info("ledger available: the UI serves it again")
					componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
					return
				}
			}
		}
	}()
	return r
}
