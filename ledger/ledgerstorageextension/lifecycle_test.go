package ledgerstorageextension

import (
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/internal/hosttest"
	"github.com/docketlabs/docket/internal/shorttest"
)

// lifecycleHost is the host of the generated lifecycle test: the default
// configuration opens the embedded ledger under ./data.
func lifecycleHost(t *testing.T) component.Host { return hosttest.InTempDir(t, shorttest.ChDB) }
