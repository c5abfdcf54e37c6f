package contentstoreextension

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/contentstore"
)

// available is implemented by a store that may not be open yet.
type available interface{ Available() bool }

// availability observes 0 while the store could not be opened yet
// (content is then recorded as store_unavailable), 1 otherwise.
func availability(st contentstore.Store) metric.Int64Callback {
	return func(_ context.Context, o metric.Int64Observer) error {
		v := int64(1)
		if a, ok := st.(available); ok && !a.Available() {
			v = 0
		}
		o.Observe(v)
		return nil
	}
}

// StatusReporter tells the collector's component status about a store
// opened with contentstore.OpenOrReopen: a recoverable error while it
// cannot be opened, OK once it is.
func StatusReporter(host component.Host) func(error) {
	return func(err error) {
		if err != nil {
			componentstatus.ReportStatus(host, componentstatus.NewRecoverableErrorEvent(err))
			return
		}
		componentstatus.ReportStatus(host, componentstatus.NewEvent(componentstatus.StatusOK))
	}
}
