// Package metadata holds the identity and stability of the tenantauth
// extension.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("tenantauth")
	ScopeName = "github.com/docketlabs/docket/extensions/tenantauthextension"
)

const ExtensionStability = component.StabilityLevelDevelopment
