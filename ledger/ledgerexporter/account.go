package ledgerexporter

import (
	"context"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/completeness"
	"github.com/docketlabs/docket/internal/conventions"
)

// tally is what convert counted of one request, per stage and tenant. The
// account takes it only once the request's fate is known, so a request the
// queue refused counts as refused, not as received.
type tally map[completeness.Stage]map[string]int64

type tallyKey struct{}

// withTally gives convert a tally to fill for the request of ctx.
func withTally(ctx context.Context) (context.Context, tally) {
	t := tally{}
	return context.WithValue(ctx, tallyKey{}, t), t
}

// tallyFrom is the request's tally; nil (counting nothing) for batches an
// earlier process received and queued.
func tallyFrom(ctx context.Context) tally {
	t, _ := ctx.Value(tallyKey{}).(tally)
	return t
}

func (t tally) add(tenant string, s completeness.Stage) {
	if t == nil {
		return
	}
	if t[s] == nil {
		t[s] = map[string]int64{}
	}
	t[s][tenant]++
}

// record adds the stages of t to the account.
func (t tally) record(a *completeness.Account, stages ...completeness.Stage) {
	for _, s := range stages {
		a.AddAll(t[s], s)
	}
}

// tenants counts the call rows of a batch per tenant, from their keys.
func (r *rows) tenants() map[string]int64 {
	n := map[string]int64{}
	for _, s := range r.segs {
		for _, k := range s.keys {
			tenant, _, _ := strings.Cut(k, "\x00")
			n[tenant]++
		}
	}
	return n
}

// spansByTenant counts the spans of td per tenant, for requests refused
// before their calls were read.
func spansByTenant(td ptrace.Traces, def string) map[string]int64 {
	n := map[string]int64{}
	for i := 0; i < td.ResourceSpans().Len(); i++ {
		rs := td.ResourceSpans().At(i)
		spans := 0
		for j := 0; j < rs.ScopeSpans().Len(); j++ {
			spans += rs.ScopeSpans().At(j).Spans().Len()
		}
		n[conventions.Tenant(rs.Resource().Attributes(), def)] += int64(spans)
	}
	return n
}
