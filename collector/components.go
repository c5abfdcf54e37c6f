// Package collector lists the components of the docket distribution and
// holds its embedded default configuration.
package collector

import (
	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/loadbalancingexporter"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/healthcheckextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/oidcauthextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/pprofextension"
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/attributesprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/filterprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/redactionprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/resourceprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/tailsamplingprocessor"
	"github.com/open-telemetry/opentelemetry-collector-contrib/processor/transformprocessor"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/forwardconnector"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/debugexporter"
	"go.opentelemetry.io/collector/exporter/otlpexporter"
	"go.opentelemetry.io/collector/exporter/otlphttpexporter"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/collector/otelcol"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/batchprocessor"
	"go.opentelemetry.io/collector/processor/memorylimiterprocessor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/service/telemetry/otelconftelemetry"

	"github.com/docketlabs/docket/contentstore/contentstoreextension"
	"github.com/docketlabs/docket/extensions/otlpcheckextension"
	"github.com/docketlabs/docket/extensions/tenantauthextension"
	"github.com/docketlabs/docket/ledger/ledgerexporter"
	"github.com/docketlabs/docket/ledger/ledgerstorageextension"
	"github.com/docketlabs/docket/ledger/lifecycle/lifecycleextension"
	"github.com/docketlabs/docket/processors/contentrefprocessor"
	"github.com/docketlabs/docket/processors/sqlsanitizerprocessor"
	"github.com/docketlabs/docket/processors/tenantprocessor"
	"github.com/docketlabs/docket/reconcile/reconcileextension"
	"github.com/docketlabs/docket/ui/uiextension"
)

// Components returns the factories of the distribution: docket's own
// components plus the upstream ones a drop-in collector needs.
func Components() (otelcol.Factories, error) {
	var err error
	f := otelcol.Factories{Telemetry: otelconftelemetry.NewFactory()}
	if f.Receivers, err = otelcol.MakeFactoryMap[receiver.Factory](
		otlpreceiver.NewFactory(),
	); err != nil {
		return f, err
	}
	if f.Processors, err = otelcol.MakeFactoryMap[processor.Factory](
		tenantprocessor.NewFactory(),
		sqlsanitizerprocessor.NewFactory(),
		contentrefprocessor.NewFactory(),
		batchprocessor.NewFactory(),
		memorylimiterprocessor.NewFactory(),
		attributesprocessor.NewFactory(),
		filterprocessor.NewFactory(),
		redactionprocessor.NewFactory(),
		resourceprocessor.NewFactory(),
		tailsamplingprocessor.NewFactory(),
		transformprocessor.NewFactory(),
	); err != nil {
		return f, err
	}
	if f.Exporters, err = otelcol.MakeFactoryMap[exporter.Factory](
		ledgerexporter.NewFactory(),
		debugexporter.NewFactory(),
		otlpexporter.NewFactory(),
		otlphttpexporter.NewFactory(),
		loadbalancingexporter.NewFactory(),
	); err != nil {
		return f, err
	}
	if f.Connectors, err = otelcol.MakeFactoryMap[connector.Factory](
		forwardconnector.NewFactory(),
	); err != nil {
		return f, err
	}
	if f.Extensions, err = otelcol.MakeFactoryMap[extension.Factory](
		uiextension.NewFactory(),
		reconcileextension.NewFactory(),
		contentstoreextension.NewFactory(),
		ledgerstorageextension.NewFactory(),
		lifecycleextension.NewFactory(),
		tenantauthextension.NewFactory(),
		oidcauthextension.NewFactory(),
		otlpcheckextension.NewFactory(),
		filestorage.NewFactory(),
		healthcheckextension.NewFactory(),
		pprofextension.NewFactory(),
	); err != nil {
		return f, err
	}
	return f, nil
}

// Info is the distribution's build information.
func Info(version string) component.BuildInfo {
	return component.BuildInfo{Command: "docket", Description: "Docket evidence collector", Version: version}
}
