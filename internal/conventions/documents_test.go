package conventions

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestRetrievedDocumentsAreMetadataOnlyWithoutText(t *testing.T) {
	slice := func(entries ...map[string]any) pcommon.Value {
		v := pcommon.NewValueSlice()
		for _, e := range entries {
			if err := v.Slice().AppendEmpty().SetEmptyMap().FromRaw(e); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	for name, tc := range map[string]struct {
		v    pcommon.Value
		want bool
	}{
		"ids, scores and versions":    {pcommon.NewValueStr(`[{"id":"kb-1","score":0.9,"version":"3"},{"id":"kb-2"}]`), true},
		"no documents":                {pcommon.NewValueStr(`[]`), true},
		"a document's text":           {pcommon.NewValueStr(`[{"id":"kb-1","content":"the secret text"}]`), false},
		"not JSON":                    {pcommon.NewValueStr(`kb-1: the secret text`), false},
		"a JSON object, not an array": {pcommon.NewValueStr(`{"id":"kb-1"}`), false},
		"structured, ids only":        {slice(map[string]any{"id": "kb-1", "score": 0.5}), true},
		"structured, with text":       {slice(map[string]any{"id": "kb-1", "text": "the secret text"}), false},
		"bytes":                       {pcommon.NewValueBytes(), false},
	} {
		if got := IsMetadataValue(RetrievalDocuments, tc.v); got != tc.want {
			t.Errorf("%s: IsMetadataValue = %v, want %v", name, got, tc.want)
		}
	}
	if !IsMetadataValue(RequestModel, pcommon.NewValueStr("gpt-4o")) || IsMetadataValue("my.app.secret", pcommon.NewValueStr("x")) {
		t.Error("IsMetadataValue must agree with IsMetadata on other keys")
	}
}
