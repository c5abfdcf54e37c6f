package ledgerexporter

import (
	"fmt"
	"testing"
	"time"

	"github.com/docketlabs/docket/ledger"
)

func reqSpan(trace, span string) ledger.EvidenceSpan {
	return ledger.EvidenceSpan{Tenant: "acme", TraceID: trace, SpanID: span, Category: "request"}
}

func spanIDs(spans []ledger.EvidenceSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.SpanID)
	}
	return out
}

func TestLinkerKeepsRequestSpansOfCallTracesOnly(t *testing.T) {
	l := newRequestLinker(RequestSpansConfig{Window: time.Minute, MaxTraces: 100, MaxPendingSpans: 100})
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	// The producer span of trace a arrives before a's call; b never has one.
	if keep, _ := l.link(t0, nil, []ledger.EvidenceSpan{reqSpan("a", "producer"), reqSpan("b", "server")}); len(keep) != 0 {
		t.Fatalf("kept %v before any call", spanIDs(keep))
	}
	keep, _ := l.link(t0.Add(time.Second), []traceKey{{"acme", "a"}}, nil)
	if fmt.Sprint(spanIDs(keep)) != "[producer]" {
		t.Fatalf("the call of a released %v", spanIDs(keep))
	}
	// a's consumer and server spans end after its call.
	keep, _ = l.link(t0.Add(2*time.Second), nil, []ledger.EvidenceSpan{reqSpan("a", "consumer"), reqSpan("a", "server")})
	if fmt.Sprint(spanIDs(keep)) != "[consumer server]" {
		t.Fatalf("after the call: kept %v", spanIDs(keep))
	}
	// Another tenant's trace with the same ID has no call.
	other := reqSpan("a", "server")
	other.Tenant = "globex"
	if keep, _ := l.link(t0.Add(3*time.Second), nil, []ledger.EvidenceSpan{other}); len(keep) != 0 {
		t.Fatal("a call of one tenant kept another tenant's span")
	}
	// b's and globex's spans wait out the window and are dropped; a is forgotten.
	keep, dropped := l.link(t0.Add(2*time.Minute), []traceKey{{"acme", "b"}}, []ledger.EvidenceSpan{reqSpan("a", "late")})
	if len(keep) != 0 || dropped != 2 {
		t.Fatalf("after the window: kept %v, dropped %d; want none kept, 2 dropped", spanIDs(keep), dropped)
	}
	if len(l.calls) != 1 || l.pendingLen != 1 {
		t.Fatalf("remembered %d traces and holds %d spans; want 1 and 1", len(l.calls), l.pendingLen)
	}
}

func TestLinkerMemoryIsBounded(t *testing.T) {
	l := newRequestLinker(RequestSpansConfig{Window: time.Hour, MaxTraces: 10, MaxPendingSpans: 5})
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	total := 0
	for i := range 1000 {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		_, d := l.link(now, []traceKey{{"acme", fmt.Sprint("call", i)}}, []ledger.EvidenceSpan{reqSpan(fmt.Sprint("wait", i), "s")})
		total += d
		if len(l.calls) > 10 || l.pendingLen > 5 || len(l.pending) > 5 || len(l.pendingAt) > 5 {
			t.Fatalf("step %d: %d traces, %d held spans", i, len(l.calls), l.pendingLen)
		}
		if l.callOrder.len() > 2*10+1 || l.pendOrder.len() > 2*5+1 {
			t.Fatalf("step %d: order queues grew to %d and %d", i, l.callOrder.len(), l.pendOrder.len())
		}
	}
	if total != 995 {
		t.Fatalf("dropped %d held spans, want 995", total)
	}
	// The newest call trace is still remembered: its late server span is kept.
	if keep, _ := l.link(t0.Add(time.Second), nil, []ledger.EvidenceSpan{reqSpan("call999", "server")}); len(keep) != 1 {
		t.Fatal("the newest call trace was forgotten")
	}
}
