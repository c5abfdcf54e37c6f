package completeness_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
)

func TestAccountCountsPerTenantAndStage(t *testing.T) {
	a := completeness.NewAccount()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				a.Add("acme", completeness.Received, 1)
				a.Add("acme", completeness.Written, 1)
			}
			a.AddAll(map[string]int64{"globex": 3, "acme": 1}, completeness.Flagged)
		})
	}
	wg.Wait()
	a.Add("globex", completeness.Received, 5)
	a.Add("globex", completeness.Written, 0)
	s := a.Snapshot(nil)
	if len(s.Tenants) != 2 || s.Tenants[0].Tenant != "acme" || s.Tenants[1].Tenant != "globex" {
		t.Fatalf("tenants %+v", s.Tenants)
	}
	acme, globex := s.Tenants[0], s.Tenants[1]
	if acme.Counts[completeness.Received] != 8000 || acme.Counts[completeness.Written] != 8000 || acme.Counts[completeness.Flagged] != 8 || acme.Pending != 0 {
		t.Errorf("acme %+v", acme)
	}
	if globex.Counts[completeness.Received] != 5 || globex.Counts[completeness.Flagged] != 24 || globex.Pending != 5 {
		t.Errorf("globex %+v", globex)
	}
	if got := a.Snapshot(func(t string) bool { return t == "globex" }).Tenants; len(got) != 1 || got[0].Tenant != "globex" {
		t.Errorf("filtered snapshot %+v", got)
	}
}

// TestAccountBoundsTenants: a sender inventing tenant names (where senders
// name their tenant) cannot grow the account without bound.
func TestAccountBoundsTenants(t *testing.T) {
	a := completeness.NewAccount()
	for i := range completeness.MaxTenants + 500 {
		a.Add(fmt.Sprintf("t%05d", i), completeness.Received, 1)
	}
	s := a.Snapshot(nil)
	if len(s.Tenants) != completeness.MaxTenants+1 {
		t.Fatalf("%d tenants kept, want %d and %q", len(s.Tenants), completeness.MaxTenants, completeness.Overflow)
	}
	var total int64
	for _, tn := range s.Tenants {
		total += tn.Counts[completeness.Received]
		if tn.Tenant == completeness.Overflow && tn.Counts[completeness.Received] != 500 {
			t.Errorf("overflow counts %d, want 500", tn.Counts[completeness.Received])
		}
	}
	if total != completeness.MaxTenants+500 {
		t.Errorf("total %d: spans were lost from the account", total)
	}
}

// TestMetricExportedOnceWithTenantAndStageOnly registers the account from
// two components through the OpenTelemetry SDK and reads the metric.
func TestMetricExportedOnceWithTenantAndStageOnly(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	a := completeness.NewAccount()
	const metricName, requestsName = "spans", "requests"
	for _, name := range []string{"ledger", "ledger/2"} {
		meter := mp.Meter(name)
		c, err := meter.Int64ObservableCounter(metricName)
		if err != nil {
			t.Fatal(err)
		}
		r, err := meter.Int64ObservableCounter(requestsName)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Register(meter, c, r); err != nil {
			t.Fatal(err)
		}
	}
	a.Add("acme", completeness.Received, 7)
	a.Add("acme", completeness.RefusedRetry, 2)
	a.Refuse("acme", completeness.RequestMalformed)
	a.Refuse(conventions.UnknownTenant, completeness.RequestAuth)
	points := func() map[string]int64 {
		var rm metricdata.ResourceMetrics
		if err := reader.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				label := map[string]attribute.Key{metricName: "stage", requestsName: "reason"}[m.Name]
				if label == "" {
					continue
				}
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					if dp.Attributes.Len() != 2 {
						t.Errorf("labels %v: want tenant and %s only", dp.Attributes.ToSlice(), label)
					}
					tenant, _ := dp.Attributes.Value(attribute.Key("tenant"))
					l, _ := dp.Attributes.Value(label)
					out[tenant.AsString()+"/"+l.AsString()] += dp.Value
				}
			}
		}
		return out
	}
	got := points()
	wantPoints := 2 * (len(completeness.Stages) + len(completeness.Refusals)) // acme and the unknown tenant
	if got["acme/received"] != 7 || got["acme/refused_retry"] != 2 || got["acme/written"] != 0 ||
		got["acme/malformed"] != 1 || got["acme/auth"] != 0 || got[conventions.UnknownTenant+"/auth"] != 1 || len(got) != wantPoints {
		t.Errorf("metric points %v (each point once, every stage and refusal)", got)
	}
	if err := a.Unregister(); err != nil {
		t.Fatal(err)
	}
	if got := points(); got["acme/received"] != 7 {
		t.Errorf("after one of two components stopped: %v", got)
	}
	if err := a.Unregister(); err != nil {
		t.Fatal(err)
	}
	if got := points(); len(got) != 0 {
		t.Errorf("after both stopped: %v", got)
	}
}

// Running totals count their growth once, however often or late a total
// is reported again, and series beyond MaxSeries are refused, not guessed.
func TestReportTotalCountsGrowthOnce(t *testing.T) {
	a := completeness.NewAccount()
	for _, r := range []struct {
		series string
		total  int64
	}{{"app-1", 5}, {"app-1", 5}, {"app-1", 9}, {"app-1", 7}, {"app-2", 3}, {"app-1", 12}} {
		if !a.ReportTotal("acme", completeness.DroppedInApp, r.series, r.total) {
			t.Fatalf("%v refused", r)
		}
	}
	if got := a.Snapshot(nil).Tenants[0].Counts[completeness.DroppedInApp]; got != 15 {
		t.Errorf("dropped in app %d, want 12 + 3", got)
	}
	for i := range completeness.MaxSeries - 2 {
		if !a.ReportTotal("acme", completeness.DroppedInApp, fmt.Sprint("fill-", i), 0) {
			t.Fatalf("series %d refused below the bound", i)
		}
	}
	if a.ReportTotal("acme", completeness.DroppedInApp, "one-too-many", 1) {
		t.Error("a series beyond MaxSeries was taken")
	}
	if !a.ReportTotal("acme", completeness.DroppedInApp, "app-1", 13) {
		t.Error("a known series was refused at the bound")
	}
	if got := a.Snapshot(nil).Tenants[0].Counts[completeness.DroppedInApp]; got != 16 {
		t.Errorf("dropped in app %d, want 16", got)
	}
}
