package sqlsanitizerprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/docketlabs/docket/internal/metrictest"
	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor/internal/metadata"
)

func TestMetrics(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	set := processortest.NewNopSettings(metadata.Type)
	set.TelemetrySettings = tel.NewTelemetrySettings()
	ctx := context.Background()

	tp, err := NewFactory().CreateTraces(ctx, set, createDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	secret := "SELECT * FROM t WHERE ssn = '078-05-1120'"
	td := dbSpan("postgresql", secret)
	firstSpan(td).Attributes().PutStr("db.query.parameter.ssn", "078-05-1120")
	require.NoError(t, tp.ConsumeTraces(ctx, td))
	require.NoError(t, tp.ConsumeTraces(ctx, dbSpan("postgresql", "SELECT 'unterminated")))
	require.NoError(t, tp.ConsumeTraces(ctx, dbSpan("postgresql", "SELECT id FROM t WHERE id = $1"))) // nothing to change

	lp, err := NewFactory().CreateLogs(ctx, set, createDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, lp.ConsumeLogs(ctx, dbLog("mysql", "SELECT 1")))

	assert.Equal(t, map[string]int64{
		"dialect=postgresql,outcome=full":    2,
		"dialect=postgresql,outcome=partial": 1,
		"dialect=mysql,outcome=full":         1,
	}, metrictest.Sums(t, tel, "otelcol_processor_sqlsanitizer_queries"))
	assert.Equal(t, map[string]int64{"signal=traces": 2, "signal=logs": 1}, metrictest.Sums(t, tel, "otelcol_processor_sqlsanitizer_records_changed"))
	assert.Equal(t, map[string]int64{"signal=traces": 1}, metrictest.Sums(t, tel, "otelcol_processor_sqlsanitizer_parameters_dropped"))

	// No label carries query text or values: every attribute value comes
	// from the fixed sets.
	allowed := map[attribute.Key]map[string]bool{
		"outcome": {"full": true, "partial": true},
		"signal":  {"traces": true, "logs": true},
		"dialect": {"generic": true, "postgresql": true, "mysql": true, "sqlite": true, "mssql": true,
			"oracle": true, "clickhouse": true, "redis": true, "mongodb": true, "json": true},
	}
	for _, name := range []string{"otelcol_processor_sqlsanitizer_queries", "otelcol_processor_sqlsanitizer_records_changed", "otelcol_processor_sqlsanitizer_parameters_dropped"} {
		m, err := tel.GetMetric(name)
		require.NoError(t, err)
		for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
			for _, kv := range dp.Attributes.ToSlice() {
				assert.Truef(t, allowed[kv.Key][kv.Value.AsString()], "%s: label %s=%q outside the fixed set", name, kv.Key, kv.Value.AsString())
			}
		}
	}
}
