package audit

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// A bundle holds the calls as first recorded and, in conflicts.<ext>, the
// later versions that were not applied; both are under the root.
func TestExportCarriesConflicts(t *testing.T) {
	const tenant = "rewritten"
	orig := newCall(tenant, 5)
	forged := orig
	forged.ResponseModel, forged.ServiceName, forged.IngestedAt = "forged", "intruder", orig.IngestedAt.Add(time.Hour)
	insert(t, []ledger.Call{orig})
	insert(t, []ledger.Call{forged})
	dir := filepath.Join(t.TempDir(), "bundle")
	m, err := Export(context.Background(), store, auditor(tenant), request(tenant, FormatJSONL), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 2 || m.Files[0].Rows != 1 || m.Files[1].Table != "conflicts" || m.Files[1].Rows != 1 {
		t.Fatalf("files %+v", m.Files)
	}
	calls, err := os.ReadFile(filepath.Join(dir, m.Files[0].Name))
	if err != nil || !strings.Contains(string(calls), orig.ResponseModel) || strings.Contains(string(calls), "forged") {
		t.Fatalf("calls file: %s %v", calls, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, m.Files[1].Name))
	if err != nil {
		t.Fatal(err)
	}
	var c ledgerstore.Conflict
	if err := json.Unmarshal(b, &c); err != nil || c.SpanID != orig.SpanID || c.ConflictingService != "intruder" || c.Source != ledgerstore.SourceCalls {
		t.Fatalf("conflicts file: %s %v", b, err)
	}
	if _, err := Verify(context.Background(), dir, engineOnly(store.Engine())); err != nil {
		t.Fatal(err)
	}
}
