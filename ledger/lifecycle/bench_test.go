package lifecycle

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docketlabs/docket/contentstore"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgertest"
)

// benchCalls writes n calls of one tenant, each with an input reference of
// its own and one shared prompt, without storing content (the ledger
// queries do not read the store). It returns the input references.
func benchCalls(b *testing.B, tenant string, n int, start time.Time) []string {
	b.Helper()
	prompt := contentstore.Ref{Tenant: tenant, Kind: "system_instructions", Digest: strings.Repeat("ab", 32)}.String()
	refs := make([]string, n)
	calls := make([]ledger.Call, 0, 5000)
	for i := range n {
		refs[i] = contentstore.Ref{Tenant: tenant, Kind: "input.messages", Digest: fmt.Sprintf("%064x", i+1)}.String()
		c := ledgertest.Call(tenant, fmt.Sprintf("%032x", i+1), "00f067aa0ba902b7")
		c.EndUserRef, c.InputRef, c.SystemInstructionsRef = fmt.Sprintf("user-%d", i%500), refs[i], prompt
		c.StartTime, c.EndTime, c.IngestedAt = start, start, start
		calls = append(calls, c)
		if len(calls) == cap(calls) || i == n-1 {
			if err := ledgerStore.InsertCalls(ctx, calls); err != nil {
				b.Fatal(err)
			}
			calls = calls[:0]
		}
	}
	return refs
}

// One page (1,000 objects) of the shared/held lookup that deletion jobs and
// expiry make, in a tenant of 50,000 calls with an active hold and a
// deletion request on record.
func BenchmarkRefStatusPage(b *testing.B) {
	f := newFixture(b, dirStore(b), Options{})
	now := time.Now().UTC()
	refs := benchCalls(b, f.tenant, 50_000, now.Add(-time.Hour))
	if _, _, err := f.m.CreateHold(ctx, admin, HoldRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-7"}, Reason: "bench"}); err != nil {
		b.Fatal(err)
	}
	if _, err := f.m.RequestDeletion(ctx, admin, DeletionRequest{Scope: Scope{Tenant: f.tenant, EndUserRef: "user-8"}, Reason: "bench"}); err != nil {
		b.Fatal(err)
	}
	page := refs[20_000:21_000]
	cutoff := now.Add(-DefaultContentDays * day)
	for b.Loop() {
		st, err := f.m.refStatuses(ctx, f.tenant, cutoff, page)
		if err != nil || len(st) != len(page) {
			b.Fatalf("%d statuses, %v", len(st), err)
		}
	}
	b.ReportMetric(float64(len(page))*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}

// A dry expiry run over a directory store of 2,000 objects, all past
// retention and referenced by 2,000 calls.
func BenchmarkExpireDryRun(b *testing.B) {
	f := newFixture(b, dirStore(b), Options{})
	start := time.Now().UTC()
	for i := range 2000 {
		f.call(callSpec{start: start, input: fmt.Sprintf("question %d", i)})
	}
	later := start.Add(200 * day)
	for b.Loop() {
		run, err := f.m.Expire(ctx, admin, ExpireOptions{Now: later, DryRun: true, Tenant: f.tenant})
		if err != nil || run.ObjectsExpired != 2000 {
			b.Fatalf("%+v %v", run.ExpiryCounts, err)
		}
	}
	b.ReportMetric(2000*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
}
