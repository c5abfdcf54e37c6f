package ledgerexporter

import (
	"slices"

	"go.opentelemetry.io/otel/attribute"

	"github.com/docketlabs/docket/internal/conventions"
)

// costStatusAttr keeps metric labels to a fixed set of values: the
// contract's cost statuses.
func costStatusAttr(status string) attribute.KeyValue {
	if slices.Contains(conventions.CostStatuses, conventions.CostStatus(status)) {
		return attribute.String("cost_status", status)
	}
	return attribute.String("cost_status", "other")
}
