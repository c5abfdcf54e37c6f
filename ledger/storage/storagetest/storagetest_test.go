package storagetest

import (
	"strings"
	"testing"

	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/storage/chdb"
)

func TestConformance(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	embedded, err := chdb.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer embedded.Close()
	for _, target := range Targets(t, embedded) {
		t.Run(target.Name, func(t *testing.T) {
			Run(t, target.Engine)
			if target.Front == nil {
				return
			}
			// The adapter's reads reached the engine as the queries are
			// written: trailing SETTINGS at the top level, nothing wrapped.
			var reads int
			for _, r := range target.Front.Requests() {
				if r.Format != "JSONEachRow" {
					continue
				}
				reads++
				if strings.Contains(r.SQL, "formatRow") {
					t.Errorf("a read was rewritten: %.200s", r.SQL)
				}
			}
			if reads < 10 {
				t.Fatalf("only %d reads went through the adapter", reads)
			}
		})
	}
}
