package tenantprocessor

import (
	"context"
	"fmt"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/processors/tenantprocessor/internal/metadata"
)

type signal string

const (
	signalTraces  signal = "traces"
	signalLogs    signal = "logs"
	signalMetrics signal = "metrics"
)

// Outcomes of a record.
const (
	outcomeAuthenticated   = "authenticated"    // stamped with the sender's tenant
	outcomeFlagged         = "flagged"          // named another tenant; stored under the sender's, marked
	outcomeRefused         = "refused"          // in a request that named another tenant; nothing stored
	outcomeUnauthenticated = "unauthenticated"  // no usable identity; refused
	outcomeSenderAttribute = "sender_attribute" // trusted the sender's attribute (loopback dev)
	outcomeRelayed         = "relayed"          // kept the tenant an authenticated relay stamped
)

// telemetry counts records by signal, outcome and tenant (metadata.yaml).
// The tenant label is only ever an authenticated tenant (from the
// authenticator's or this processor's configuration, or stamped by an
// authenticated relay that authenticated its own senders), never a value
// an unauthenticated sender wrote.
type telemetry struct {
	*metadata.TelemetryBuilder
	// account is where refused spans are counted beside the ledger's.
	account *completeness.Account
}

func newTelemetry(set component.TelemetrySettings) (*telemetry, error) {
	b, err := metadata.NewTelemetryBuilder(set)
	if err != nil {
		return nil, fmt.Errorf("tenant: create metrics: %w", err)
	}
	return &telemetry{TelemetryBuilder: b, account: completeness.Process}, nil
}

func (t *telemetry) add(ctx context.Context, sig signal, outcome, tenant string, n int64) {
	if n == 0 {
		return
	}
	t.ProcessorTenantRecords.Add(ctx, n, metric.WithAttributeSet(attribute.NewSet(
		attribute.String("signal", string(sig)), attribute.String("outcome", outcome), attribute.String("tenant", tenant))))
	if sig == signalTraces && (outcome == outcomeRefused || outcome == outcomeUnauthenticated) {
		t.account.Add(tenant, completeness.RefusedAuth, n)
	}
}
