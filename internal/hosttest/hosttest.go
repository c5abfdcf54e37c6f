// Package hosttest is the host of the lifecycle tests mdatagen
// generates (metadata.yaml, tests.host) for components whose default
// configuration keeps its data under ./data.
package hosttest

import (
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/docketlabs/docket/internal/shorttest"
)

// InTempDir moves t into a temporary directory, so that the component's
// ./data is the test's own, and returns a host without extensions. deps
// name what the component's Start needs beyond Go (shorttest constants):
// under -short the test is skipped.
func InTempDir(t *testing.T, deps ...string) component.Host {
	t.Helper()
	if len(deps) > 0 {
		shorttest.Needs(t, deps...)
	}
	t.Chdir(t.TempDir())
	return componenttest.NewNopHost()
}

// Extensions is a host with the given extensions, for a component that
// looks another one up by ID (a content store, the ledger's storage).
type Extensions map[component.ID]component.Component

// GetExtensions returns the extensions.
func (h Extensions) GetExtensions() map[component.ID]component.Component { return h }
