// Package metadata holds the identity and stability of the contentref
// processor.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("contentref")
	ScopeName = "github.com/docketlabs/docket/processors/contentrefprocessor"
)

const (
	TracesStability = component.StabilityLevelDevelopment
	LogsStability   = component.StabilityLevelDevelopment
)
