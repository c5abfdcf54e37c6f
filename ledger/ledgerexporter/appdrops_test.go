package ledgerexporter

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
)

// sdkReport is one SDK's report: processed spans, and dropped ones under
// error.type, as a cumulative or delta sum.
func sdkReport(tenant, instance string, processed, dropped int64, temporality pmetric.AggregationTemporality) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(conventions.TenantAttribute, tenant)
	rm.Resource().Attributes().PutStr("service.instance.id", instance)
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("go.opentelemetry.io/otel/sdk/trace/internal/observ")
	m := sm.Metrics().AppendEmpty()
	m.SetName(sdkSpansProcessed)
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(temporality)
	ok := sum.DataPoints().AppendEmpty()
	ok.SetIntValue(processed)
	ok.SetStartTimestamp(pcommon.Timestamp(1))
	drop := sum.DataPoints().AppendEmpty()
	drop.SetIntValue(dropped)
	drop.SetStartTimestamp(pcommon.Timestamp(1))
	drop.Attributes().PutStr(conventions.ErrorType, "queue_full")
	other := sm.Metrics().AppendEmpty()
	other.SetName("http.server.request.duration")
	other.SetEmptySum().DataPoints().AppendEmpty().SetIntValue(1000)
	return md
}

// Cumulative reports count their growth per sending process once,
// however often they arrive; delta reports add up; processed spans and
// other metrics count nothing.
func TestAppDropsCountedPerTenant(t *testing.T) {
	d := &appDrops{defaultTenant: conventions.DefaultTenant, logger: zap.NewNop(), account: completeness.NewAccount()}
	cum, delta := pmetric.AggregationTemporalityCumulative, pmetric.AggregationTemporalityDelta
	for _, md := range []pmetric.Metrics{
		sdkReport("acme", "a-1", 100, 4, cum),
		sdkReport("acme", "a-1", 100, 4, cum), // sent again
		sdkReport("acme", "a-1", 180, 9, cum),
		sdkReport("acme", "a-2", 50, 2, cum),  // another process of acme
		sdkReport("acme", "a-1", 150, 6, cum), // late
		sdkReport("globex", "g-1", 10, 3, delta),
		sdkReport("globex", "g-1", 10, 3, delta),
	} {
		if err := d.push(context.Background(), md); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int64{}
	for _, tn := range d.account.Snapshot(nil).Tenants {
		for st, n := range tn.Counts {
			if n != 0 {
				got[tn.Tenant+"/"+string(st)] = n
			}
		}
	}
	want := map[string]int64{"acme/dropped_in_app": 11, "globex/dropped_in_app": 6}
	if len(got) != len(want) || got["acme/dropped_in_app"] != 11 || got["globex/dropped_in_app"] != 6 {
		t.Errorf("account %v, want %v", got, want)
	}
}
