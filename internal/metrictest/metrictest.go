// Package metrictest reads a component's counters in tests.
package metrictest

import (
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Sums returns a monotonic int64 counter's values keyed by its attribute
// set written "k=v,k=v" (keys sorted).
func Sums(t *testing.T, tel *componenttest.Telemetry, name string) map[string]int64 {
	t.Helper()
	m, err := tel.GetMetric(name)
	if err != nil {
		t.Fatalf("metric %s: %v", name, err)
	}
	sum, ok := m.Data.(metricdata.Sum[int64])
	if !ok || !sum.IsMonotonic {
		t.Fatalf("%s is %T, not a monotonic int64 sum", name, m.Data)
	}
	out := map[string]int64{}
	for _, dp := range sum.DataPoints {
		var parts []string
		for _, kv := range dp.Attributes.ToSlice() {
			parts = append(parts, string(kv.Key)+"="+kv.Value.AsString())
		}
		out[strings.Join(parts, ",")] = dp.Value
	}
	return out
}
