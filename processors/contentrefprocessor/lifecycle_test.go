package contentrefprocessor

import (
	"testing"

	"go.opentelemetry.io/collector/component"

	"github.com/docketlabs/docket/contentstore"
)

// lifecycleHost is the host of the generated lifecycle test: the processor
// needs its content store at start, here a directory store of the test's.
func lifecycleHost(t *testing.T) component.Host {
	h, _ := storeExt(t, dirStoreConfig(t, contentstore.Limits{}))
	return h
}
