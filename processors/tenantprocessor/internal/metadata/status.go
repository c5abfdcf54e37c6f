// Package metadata holds the identity and stability of the tenant
// processor.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("tenant")
	ScopeName = "github.com/docketlabs/docket/processors/tenantprocessor"
)

const (
	TracesStability = component.StabilityLevelDevelopment
	LogsStability   = component.StabilityLevelDevelopment
)
