// Package metadata holds the identity and stability of the otlpcheck
// extension.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("otlpcheck")
	ScopeName = "github.com/docketlabs/docket/extensions/otlpcheckextension"
)

const ExtensionStability = component.StabilityLevelDevelopment
