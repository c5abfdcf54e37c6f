package contentstoreextension

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/contentstore"
)

// available is implemented by a store that may not be open yet.
type available interface{ Available() bool }

// registerAvailability reports docket_contentstore_available: 0 while the
// store could not be opened yet (content is then recorded as
// store_unavailable), 1 otherwise.
func registerAvailability(meter metric.Meter, st contentstore.Store) error {
	_, err := meter.Int64ObservableGauge("docket_contentstore_available",
		metric.WithDescription("1 once the content store is open, 0 while the collector runs without it"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			v := int64(1)
			if a, ok := st.(available); ok && !a.Available() {
				v = 0
			}
			o.Observe(v)
			return nil
		}))
	if err != nil {
		return fmt.Errorf("contentstore: create metrics: %w", err)
	}
	return nil
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
