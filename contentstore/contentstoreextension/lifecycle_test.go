package contentstoreextension

import (
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/internal/hosttest"
)

// lifecycleHost is the host of the generated lifecycle test: the default
// configuration keeps the store (and its secret) under ./data.
func lifecycleHost(t *testing.T) component.Host { return hosttest.InTempDir(t) }
