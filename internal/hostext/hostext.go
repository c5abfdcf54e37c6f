// Package hostext finds a collector extension by ID as the interface its
// kind implements: the one way a component reaches a shared extension (a
// store, the lifecycle runner, the tenant resolver), with one set of
// errors.
package hostext

import (
	"fmt"

	"go.opentelemetry.io/collector/component"
)

// Find returns extension id of host as a P; kind names P's kind in errors.
func Find[P any](host component.Host, id component.ID, kind string) (P, error) {
	var p P
	ext, ok := host.GetExtensions()[id]
	if !ok {
		return p, fmt.Errorf("%s extension %s is not in service.extensions", kind, id)
	}
	if p, ok = ext.(P); !ok {
		return p, fmt.Errorf("extension %s is not a %s extension", id, kind)
	}
	return p, nil
}
