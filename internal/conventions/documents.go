package conventions

import (
	"encoding/json"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// DocumentFields are the fields of a gen_ai.retrieval.documents entry that
// are metadata: what identifies a retrieved document (its ID and the
// version, which travels as an extra property) and its score. Any other
// property may carry the document's text.
var DocumentFields = []string{"id", "score", "version"}

// maxDocumentsJSON bounds the documents attribute read to judge it.
const maxDocumentsJSON = 1 << 20

// IsMetadataValue reports whether attribute k with value v is metadata on
// GenAI telemetry. gen_ai.retrieval.documents is metadata only while its
// entries hold nothing but DocumentFields; otherwise the whole attribute
// is content (fail closed: the entries may quote the documents).
func IsMetadataValue(k string, v pcommon.Value) bool {
	if !IsMetadata(k) {
		return false
	}
	if k != RetrievalDocuments {
		return true
	}
	var entries []map[string]any
	switch v.Type() {
	case pcommon.ValueTypeStr:
		if len(v.Str()) > maxDocumentsJSON || json.Unmarshal([]byte(v.Str()), &entries) != nil {
			return false
		}
	case pcommon.ValueTypeSlice:
		for _, e := range v.Slice().AsRaw() {
			m, ok := e.(map[string]any)
			if !ok {
				return false
			}
			entries = append(entries, m)
		}
	default:
		return false
	}
	for _, e := range entries {
		for f := range e {
			if !slices.Contains(DocumentFields, f) {
				return false
			}
		}
	}
	return true
}
