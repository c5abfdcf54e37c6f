package contentrefprocessor

import (
	"fmt"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/internal/conventions"
)

// TestOneTenantCannotFillTheStore: a tenant sending content until it is
// refused leaves room for the others (the default tenant quota is half the
// store), and once refused, a message it had stored before is refused too:
// the span's status does not tell stored from new content.
func TestOneTenantCannotFillTheStore(t *testing.T) {
	h, _ := storeExt(t, dirStoreConfig(t, contentstore.Limits{MaxObjectBytes: 1 << 20, MaxTotalBytes: 3 << 20}))
	hs := newHarness(t, defaultConfig(), h)
	send := func(tenant, prompt string) string {
		td := ptrace.NewTraces()
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(conventions.TenantAttribute, tenant)
		newSpan(rs, "chat").Attributes().PutStr(conventions.Prompt, prompt)
		v, _ := spansByName(hs.consumeTraces(t, td))["chat"].Attributes().Get(AttrStatus)
		return v.Str()
	}
	item := func(i int) string { return fmt.Sprintf("%d%s", i, strings.Repeat("z", 700<<10)) }
	statuses := map[string]int{}
	for i := range 8 {
		statuses[send("noisy", item(i))]++
	}
	if statuses[StatusStored] == 0 || statuses[StatusStored]+statuses[StatusOverQuota] != 8 {
		t.Fatalf("noisy tenant: %v", statuses)
	}
	if got := send("noisy", item(0)); got != StatusOverQuota {
		t.Fatalf("a message stored before is %q while new ones are over_quota: the status tells them apart", got)
	}
	for _, tenant := range []string{"quiet", "other"} {
		// 300 KiB: more than what one tenant filling the store would leave.
		if got := send(tenant, tenant+strings.Repeat("q", 300<<10)); got != StatusStored {
			t.Fatalf("%s: %q after another tenant filled its quota", tenant, got)
		}
	}
}
