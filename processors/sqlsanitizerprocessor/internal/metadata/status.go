// Package metadata holds the identity and stability of the sqlsanitizer
// processor.
package metadata

import "go.opentelemetry.io/collector/component"

var (
	Type      = component.MustNewType("sqlsanitizer")
	ScopeName = "github.com/docketlabs/docket/processors/sqlsanitizerprocessor"
)

const (
	TracesStability = component.StabilityLevelDevelopment
	LogsStability   = component.StabilityLevelDevelopment
)
