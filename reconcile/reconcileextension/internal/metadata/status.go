// Package metadata holds the identity and stability of the reconcile
// extension.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("reconcile")
	ScopeName = "github.com/docketlabs/docket/reconcile/reconcileextension"
)

const ExtensionStability = component.StabilityLevelDevelopment
