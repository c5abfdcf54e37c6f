package collector_test

import (
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/docketlabs/docket/internal/conventions"
	"github.com/docketlabs/docket/internal/spantest"
	"github.com/docketlabs/docket/ledger"
	"github.com/docketlabs/docket/ledger/ledgerstore"
)

// An attacker re-sends a recorded call's span over OTLP with another
// response model, tokens, end user and content status, in a batch with a
// call of its own: the evidence API still shows the call as first
// recorded, with the rewrite as a conflict naming the sender's service. An
// identical redelivery changes nothing.
func TestRewrittenResendOverOTLPKeepsTheOriginal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the collector")
	}
	p := newCollectorProc(t, docketBinary(t), "ledger-e2e.yaml")
	p.start()
	batch := func(service string, ids ...int) (ptrace.Traces, ptrace.SpanSlice) {
		td, spans := spantest.Traces(map[string]any{conventions.ServiceName: service})
		for _, i := range ids {
			appendCall(spans, i).PutStr(conventions.EndUser, "user-orig")
		}
		return td, spans
	}
	orig, origSpans := batch("e2e", 7)
	send(t, p.otlpURL, orig)
	p.waitCalls(1, time.Minute)
	trace := origSpans.At(0).TraceID().String()
	var before evidence
	if err := p.get("/api/v1/evidence/"+trace, &before); err != nil || len(before.Calls) != 1 {
		t.Fatalf("evidence before: %+v %v", before, err)
	}

	forged, forgedSpans := batch("intruder", 7, 8)
	origSpans.At(0).CopyTo(forgedSpans.At(0))
	a := forgedSpans.At(0).Attributes()
	a.PutStr(conventions.ResponseModel, "attacker-model")
	a.PutInt(conventions.UsageInput, 999999)
	a.PutStr(conventions.EndUser, "user-else")
	send(t, p.otlpURL, forged)
	deadline := time.Now().Add(time.Minute)
	for c, err := p.stats(); (err != nil || c.Calls < 2) && time.Now().Before(deadline); c, err = p.stats() {
		time.Sleep(250 * time.Millisecond)
	}
	p.checkEvidence(trace, before.Calls, "intruder")
	p.waitCalls(2, time.Minute, 1)
	// The identical redelivery, as an SDK retry sends it.
	send(t, p.otlpURL, orig)
	time.Sleep(2 * time.Second)
	p.waitCalls(2, time.Minute, 1)
	p.checkEvidence(trace, before.Calls, "intruder")
}

type evidence struct {
	Calls     []ledger.Call          `json:"calls"`
	Conflicts []ledgerstore.Conflict `json:"conflicts"`
}

// checkEvidence checks that the evidence API shows calls as they are,
// and one conflict sent by service.
func (p *collectorProc) checkEvidence(trace string, calls []ledger.Call, service string) {
	p.t.Helper()
	var ev evidence
	if err := p.get("/api/v1/evidence/"+trace, &ev); err != nil {
		p.t.Fatal(err)
	}
	if !reflect.DeepEqual(ev.Calls, calls) {
		p.t.Fatalf("the re-send replaced the call:\n got %+v\nwant %+v", ev.Calls, calls)
	}
	if len(ev.Conflicts) != 1 || ev.Conflicts[0].ConflictingService != service || ev.Conflicts[0].SpanID != calls[0].SpanID {
		p.t.Fatalf("conflicts: %+v", ev.Conflicts)
	}
}
