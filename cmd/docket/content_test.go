package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docketlabs/docket/internal/shorttest"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

func TestContentGetIsAudited(t *testing.T) {
	shorttest.Needs(t, shorttest.ChDB)
	dir := t.TempDir()
	ctx := context.Background()
	local := localFlags{storage: storageFlags{dataDir: dir}, actor: "ops-on-call"}
	d, err := local.open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	trace := "0af7651916cd43dd8448eb211c80319c"
	ref := storeCall(t, d, trace, "my card is 4111 1111 1111 1111").InputRef

	run := func(args ...string) (string, error) {
		cmd := contentCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(append([]string{"get", "--data", dir, "--content", filepath.Join(dir, "content"), "--actor", "ops-on-call"}, args...))
		err := cmd.ExecuteContext(ctx)
		return out.String(), err
	}
	if out, err := run("--trace", trace, ref); err == nil || out != "" {
		t.Fatalf("read without a reason: %q, %v", out, err)
	}
	out, err := run("--trace", trace, "--reason", "chargeback dispute CB-77", ref)
	if err != nil || !strings.Contains(out, "4111 1111 1111 1111") {
		t.Fatalf("audited read: %q, %v", out, err)
	}
	log, err := d.ledger.AccessLog(ctx, ledgerstore.AccessFilter{Tenant: "acme"})
	if err != nil || len(log) != 2 {
		t.Fatalf("access log: %v, %d rows", err, len(log))
	}
	if log[0].Outcome != "allowed" || log[0].Actor != "ops-on-call" || log[0].Reason != "chargeback dispute CB-77" || log[1].Outcome != "denied" {
		t.Fatalf("access log rows: %+v", log)
	}
}
