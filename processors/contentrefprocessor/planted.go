package contentrefprocessor

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
)

// ownNamespace holds the attributes Docket writes (content status,
// references, replay links).
const ownNamespace = "docket."

// refPrefix starts every content reference.
const refPrefix = contentstore.Scheme + ":"

// planted reports whether an incoming attribute is one only the collector
// may write: anything in Docket's namespace, a content key's reference, or
// any *_ref attribute holding a content reference (the ledger reads every
// such attribute as a reference). A sender that could set these would make
// another user's content look referenced by its own calls — shared, so
// kept past that user's deletion request — or forge a call's status.
func planted(k string, v pcommon.Value) bool {
	if strings.HasPrefix(k, ownNamespace) || conventions.IsRefName(k) {
		return true
	}
	return strings.HasSuffix(k, conventions.RefSuffix) && v.Type() == pcommon.ValueTypeStr && strings.HasPrefix(v.Str(), refPrefix)
}

// removePlanted removes the planted attributes of a span, span event or
// log record, before anything is collected from it, and returns how many
// there were. They are removed rather than renamed: their values are the
// sender's, could be anything (content included), and a renamed reference
// would still point a reader at someone else's object.
func removePlanted(attrs pcommon.Map) int64 {
	var n int64
	attrs.RemoveIf(func(k string, v pcommon.Value) bool {
		if planted(k, v) {
			n++
			return true
		}
		return false
	})
	return n
}
