package ledgerexporter

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/docketlabs/docket/ledger/pricing"
)

// costStatusAttr keeps metric labels to a fixed set of values.
func costStatusAttr(status string) attribute.KeyValue {
	switch pricing.Status(status) {
	case pricing.StatusUnknownModel, pricing.StatusMissingUsage, pricing.StatusInvalidUsage:
		return attribute.String("cost_status", status)
	}
	return attribute.String("cost_status", "other")
}
