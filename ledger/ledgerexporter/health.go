package ledgerexporter

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/otel/metric"
)

// health reports whether the ledger's storage takes writes, to the
// collector's component status (health_check with component status) and
// as the otelcol_exporter_ledger_storage_available gauge. Calls are accepted and
// queued either way.
type health struct {
	mu   sync.Mutex
	host component.Host
	up   bool
	err  error
}

// observe reports 1 while the storage takes writes, else 0.
func (h *health) observe(_ context.Context, o metric.Int64Observer) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := int64(0)
	if h.up {
		v = 1
	}
	o.Observe(v)
	return nil
}

func (h *health) start(host component.Host) {
	h.mu.Lock()
	h.host = host
	h.mu.Unlock()
}

// set records the storage's state and reports a change.
func (h *health) set(err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	up := err == nil
	if up == h.up && (up || h.err != nil) {
		return
	}
	h.up, h.err = up, err
	if h.host == nil {
		return
	}
	if up {
		componentstatus.ReportStatus(h.host, componentstatus.NewEvent(componentstatus.StatusOK))
	} else {
		componentstatus.ReportStatus(h.host, componentstatus.NewRecoverableErrorEvent(err))
	}
}
