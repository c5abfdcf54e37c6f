// Package metadata holds the identity and stability of the contentstore
// extension.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("contentstore")
	ScopeName = "github.com/docketlabs/docket/contentstore/contentstoreextension"
)

const ExtensionStability = component.StabilityLevelDevelopment
