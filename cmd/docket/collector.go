package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/provider/envprovider"
	"go.opentelemetry.io/collector/confmap/provider/fileprovider"
	"go.opentelemetry.io/collector/confmap/provider/yamlprovider"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/otelcol"

	"github.com/docketlabs/docket/collector"
)

// componentStatusHealth makes health_check answer from the components'
// own status (its v2 behaviour), so a collector running without its ledger
// or content store says so instead of "Server available". Set before the
// flags are parsed: --feature-gates=-extension.healthcheck.useComponentStatus
// turns it off again.
func componentStatusHealth() {
	_ = featuregate.GlobalRegistry().Set("extension.healthcheck.useComponentStatus", true)
}

func collectorSettings(configURIs []string) otelcol.CollectorSettings {
	return otelcol.CollectorSettings{
		BuildInfo: collector.Info(buildVersion()),
		Factories: collector.Components,
		ConfigProviderSettings: otelcol.ConfigProviderSettings{
			ResolverSettings: confmap.ResolverSettings{
				URIs: configURIs,
				ProviderFactories: []confmap.ProviderFactory{
					fileprovider.NewFactory(), envprovider.NewFactory(), yamlprovider.NewFactory(),
				},
			},
		},
	}
}

// collectorCommand is otelcol's own command, so every otelcol flag and
// subcommand (--config, --set, validate, components) works unchanged.
func collectorCommand() *cobra.Command {
	componentStatusHealth()
	cmd := otelcol.NewCommand(collectorSettings(nil))
	cmd.Use = "collector"
	cmd.Short = "Run the drop-in OpenTelemetry Collector with docket's components"
	return cmd
}

// runCollector runs a collector with the given config until it is stopped
// by a signal.
func runCollector(ctx context.Context, configPath string) error {
	componentStatusHealth()
	col, err := otelcol.NewCollector(collectorSettings([]string{"file:" + configPath}))
	if err != nil {
		return fmt.Errorf("collector: %w", err)
	}
	return col.Run(ctx)
}
