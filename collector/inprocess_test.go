package collector_test

import (
	"context"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/docketlabs/docket/collector"
)

// startInProcess runs the distribution's collector on testdata/config (its
// ${env:…} references read the test's environment) in this process until
// the test ends.
func startInProcess(t *testing.T, config string) *otelcol.Collector {
	t.Helper()
	cfg, err := filepath.Abs(filepath.Join("testdata", config))
	if err != nil {
		t.Fatal(err)
	}
	col, err := otelcol.NewCollector(otelcol.CollectorSettings{
		BuildInfo: collector.Info("test"),
		Factories: collector.Components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{ResolverSettings: confmap.ResolverSettings{
			URIs:              []string{"file:" + cfg},
			ProviderFactories: []confmap.ProviderFactory{fileprovider.NewFactory(), envprovider.NewFactory()},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	runErr := make(chan error, 1)
	go func() { runErr <- col.Run(context.Background()) }()
	t.Cleanup(func() {
		col.Shutdown()
		if err := <-runErr; err != nil {
			t.Logf("collector run: %v", err)
		}
	})
	return col
}
